-- Spans received over OTLP (`intpath-collector receive`, or `collect
-- --otlp-listen`), in the same file as the telemetry they are diagnosed
-- with. Ids are lowercase hex; times are ns since the Unix epoch on the
-- clock of the host that recorded the span. Attribute lists are JSON objects
-- (string, bool, integer and double values as themselves, arrays and key-value
-- lists as arrays and objects, bytes as {"bytesValue": base64}).

-- One row per distinct resource: senders repeat theirs in every export.
CREATE TABLE span_resources (
    id          INTEGER PRIMARY KEY,
    -- The resource's service.name attribute ('' when it has none).
    service     TEXT NOT NULL,
    attributes  TEXT NOT NULL UNIQUE
);

CREATE TABLE spans (
    trace_id            TEXT NOT NULL,
    span_id             TEXT NOT NULL,
    -- NULL for a root span.
    parent_span_id      TEXT,
    trace_state         TEXT NOT NULL,
    flags               INTEGER NOT NULL,
    name                TEXT NOT NULL,
    -- OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client,
    -- 4 producer, 5 consumer.
    kind                INTEGER NOT NULL,
    start_ns            INTEGER NOT NULL,
    end_ns              INTEGER NOT NULL,
    resource_id         INTEGER NOT NULL REFERENCES span_resources(id),
    scope_name          TEXT NOT NULL,
    scope_version       TEXT NOT NULL,
    attributes          TEXT NOT NULL,
    -- [{"time_ns", "name", "attributes"}, ...]
    events              TEXT NOT NULL,
    -- [{"trace_id", "span_id", "trace_state", "attributes"}, ...]
    links               TEXT NOT NULL,
    -- OTLP StatusCode: 0 unset, 1 ok, 2 error.
    status_code         INTEGER NOT NULL,
    status_message      TEXT NOT NULL,
    dropped_attributes  INTEGER NOT NULL,
    dropped_events      INTEGER NOT NULL,
    dropped_links       INTEGER NOT NULL,
    -- When the receiver stored the span (its own clock).
    received_ns         INTEGER NOT NULL
);
-- A span sent twice (an exporter retrying after a lost answer) is kept once.
CREATE UNIQUE INDEX spans_by_id ON spans (trace_id, span_id);
