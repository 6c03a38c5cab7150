-- Each switch's cumulative per-port packet counters, as on SQLite
-- (migrations/0010).
CREATE TABLE port_counters (
    run_id  bigint NOT NULL REFERENCES runs(id),
    switch  text NOT NULL,
    port    integer NOT NULL,
    t_ns    bigint NOT NULL,
    rx      bigint NOT NULL,
    tx      bigint NOT NULL,
    PRIMARY KEY (run_id, switch, port, t_ns)
);
