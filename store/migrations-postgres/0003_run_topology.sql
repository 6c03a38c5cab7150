-- The topology a run measured, as on SQLite (migrations/0009).
ALTER TABLE runs ADD COLUMN topology_json text;
