-- Each switch's cumulative per-port packet counters (sr_int's
-- rx_port_counter and tx_port_counter, read over P4Runtime), one row per
-- port and reading: a link's loss is what its sender's port sent and its
-- receiver's port did not receive, where probes only tell which path lost.
CREATE TABLE port_counters (
    run_id  INTEGER NOT NULL REFERENCES runs(id),
    switch  TEXT NOT NULL,
    port    INTEGER NOT NULL,
    t_ns    INTEGER NOT NULL,
    rx      INTEGER NOT NULL,
    tx      INTEGER NOT NULL,
    PRIMARY KEY (run_id, switch, port, t_ns)
);
