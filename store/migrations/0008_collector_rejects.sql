-- Several collectors may write one run (`collect --run-key`), each counting
-- what it rejected since it started: one row per collector and reason, and
-- `rejects` becomes their sum, so shared runs add counts instead of keeping
-- the last writer's (as on PostgreSQL, migrations-postgres/0002).
CREATE TABLE collectors (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER NOT NULL,
    started_ns  INTEGER NOT NULL
);
CREATE INDEX collectors_by_run ON collectors (run_id);

CREATE TABLE collector_rejects (
    run_id        INTEGER NOT NULL,
    collector_id  INTEGER NOT NULL,
    reason        TEXT NOT NULL,
    count         INTEGER NOT NULL,
    PRIMARY KEY (run_id, collector_id, reason)
) WITHOUT ROWID;

-- Counts written before this migration belong to no registered collector.
INSERT INTO collector_rejects (run_id, collector_id, reason, count)
    SELECT run_id, 0, reason, count FROM rejects;
DROP TABLE rejects;
CREATE VIEW rejects (run_id, reason, count) AS
    SELECT run_id, reason, SUM(count) FROM collector_rejects GROUP BY run_id, reason;
