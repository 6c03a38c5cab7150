-- Collectors started with the same `--run KEY` share one run (as on
-- PostgreSQL, migrations-postgres/0001); NULL: a run of its own.
ALTER TABLE runs ADD COLUMN key TEXT;
CREATE UNIQUE INDEX runs_by_key ON runs (key);
