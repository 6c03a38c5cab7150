-- The intpath telemetry store. Times: *_ns are ns since the Unix epoch
-- (generator or collector clock), *_us are µs of a switch clock.

CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    started_ns  INTEGER NOT NULL,
    -- Earliest probe send time: the origin of query and heatmap times.
    first_ns    INTEGER,
    bucket_ns   INTEGER NOT NULL,
    topology    TEXT NOT NULL,
    plan_algo   TEXT NOT NULL
);

CREATE TABLE switches (
    run_id  INTEGER NOT NULL REFERENCES runs(id),
    pos     INTEGER NOT NULL,
    id      INTEGER NOT NULL,
    name    TEXT NOT NULL,
    PRIMARY KEY (run_id, pos)
) WITHOUT ROWID;

-- Directed links: src sends out of src_port, dst receives on dst_port.
CREATE TABLE links (
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    id        INTEGER NOT NULL,
    src       TEXT NOT NULL,
    src_port  INTEGER NOT NULL,
    dst       TEXT NOT NULL,
    dst_port  INTEGER NOT NULL,
    PRIMARY KEY (run_id, id)
) WITHOUT ROWID;

CREATE TABLE paths (
    run_id  INTEGER NOT NULL REFERENCES runs(id),
    id      INTEGER NOT NULL,
    nodes   TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
) WITHOUT ROWID;

-- The links each path crosses, in order.
CREATE TABLE path_links (
    run_id   INTEGER NOT NULL,
    path_id  INTEGER NOT NULL,
    pos      INTEGER NOT NULL,
    link_id  INTEGER NOT NULL,
    PRIMARY KEY (run_id, path_id, pos)
) WITHOUT ROWID;

CREATE TABLE probes (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL,
    path_id   INTEGER NOT NULL,
    seq       INTEGER NOT NULL,
    send_ns   INTEGER NOT NULL,
    recv_ns   INTEGER NOT NULL,
    e2e_ns    INTEGER NOT NULL,
    hops      INTEGER NOT NULL
);
CREATE INDEX probes_by_path ON probes (run_id, path_id, send_ns);

CREATE TABLE hops (
    probe_id       INTEGER NOT NULL,
    hop            INTEGER NOT NULL,
    switch_id      INTEGER NOT NULL,
    ingress_port   INTEGER NOT NULL,
    egress_port    INTEGER NOT NULL,
    link_id        INTEGER,
    ingress_ts_us  INTEGER NOT NULL,
    egress_ts_us   INTEGER NOT NULL,
    qdepth         INTEGER NOT NULL,
    qdelay_us      INTEGER NOT NULL
);
-- No key or index on purpose: rows are appended in (probe_id, hop) order,
-- which is the rowid order, and an index would halve the store rate.

-- Per directed link and time bucket (bucket = send_ns / runs.bucket_ns).
CREATE TABLE link_buckets (
    run_id      INTEGER NOT NULL,
    link_id     INTEGER NOT NULL,
    bucket      INTEGER NOT NULL,
    samples     INTEGER NOT NULL,
    qdepth_min  INTEGER NOT NULL,
    qdepth_sum  INTEGER NOT NULL,
    qdepth_max  INTEGER NOT NULL,
    qdelay_min  INTEGER NOT NULL,
    qdelay_sum  INTEGER NOT NULL,
    qdelay_max  INTEGER NOT NULL,
    PRIMARY KEY (run_id, link_id, bucket)
) WITHOUT ROWID;

CREATE VIEW link_bucket_stats AS
SELECT run_id, link_id, bucket, samples,
       qdepth_min, CAST(qdepth_sum AS REAL) / samples AS qdepth_mean, qdepth_max,
       qdelay_min, CAST(qdelay_sum AS REAL) / samples AS qdelay_mean, qdelay_max
FROM link_buckets;

-- Per path and time bucket; lost may be negative where late probes filled
-- gaps counted in an earlier bucket.
CREATE TABLE path_buckets (
    run_id      INTEGER NOT NULL,
    path_id     INTEGER NOT NULL,
    bucket      INTEGER NOT NULL,
    probes      INTEGER NOT NULL,
    lost        INTEGER NOT NULL,
    duplicates  INTEGER NOT NULL,
    reordered   INTEGER NOT NULL,
    e2e_sum_ns  INTEGER NOT NULL,
    e2e_max_ns  INTEGER NOT NULL,
    PRIMARY KEY (run_id, path_id, bucket)
) WITHOUT ROWID;

-- Running totals per path over the whole run.
CREATE TABLE path_stats (
    run_id      INTEGER NOT NULL,
    path_id     INTEGER NOT NULL,
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    received    INTEGER NOT NULL,
    duplicates  INTEGER NOT NULL,
    reordered   INTEGER NOT NULL,
    lost        INTEGER NOT NULL,
    restarts    INTEGER NOT NULL,
    PRIMARY KEY (run_id, path_id)
) WITHOUT ROWID;

-- Probes not stored, by reason (parse::Reject::name).
CREATE TABLE rejects (
    run_id  INTEGER NOT NULL,
    reason  TEXT NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (run_id, reason)
) WITHOUT ROWID;
