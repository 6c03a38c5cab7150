-- Hop records move into their probe's row: one JSON array per probe,
-- `[[switch_id, ingress_port, egress_port, link_id, ingress_ts_us - ts0_us,
-- egress_ts_us - ingress_ts_us, qdepth, qdelay_us], ...]` in hop order
-- (link_id is null for a hop on no known link; ts0_us is the first hop's
-- ingress time, so the switch clocks take a few digits, not sixteen). One
-- short row per probe instead of one row per hop is what lets the store
-- absorb over a million hop records per second; the `hops` view below still
-- shows one row per hop, with the columns and values of 0001.

ALTER TABLE probes ADD COLUMN ts0_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE probes ADD COLUMN records TEXT NOT NULL DEFAULT '[]';

UPDATE probes SET records = (
    SELECT json_group_array(json_array(switch_id, ingress_port, egress_port, link_id,
                                       ingress_ts_us, egress_ts_us - ingress_ts_us,
                                       qdepth, qdelay_us))
    FROM (SELECT * FROM hops WHERE hops.probe_id = probes.id ORDER BY hop)
)
WHERE EXISTS (SELECT 1 FROM hops WHERE hops.probe_id = probes.id);

DROP TABLE hops;

CREATE VIEW hops AS
SELECT p.id AS probe_id,
       CAST(r.key AS INTEGER) AS hop,
       r.value ->> 0 AS switch_id,
       r.value ->> 1 AS ingress_port,
       r.value ->> 2 AS egress_port,
       r.value ->> 3 AS link_id,
       p.ts0_us + (r.value ->> 4) AS ingress_ts_us,
       p.ts0_us + (r.value ->> 4) + (r.value ->> 5) AS egress_ts_us,
       r.value ->> 6 AS qdepth,
       r.value ->> 7 AS qdelay_us
FROM probes p, json_each(p.records) r;
