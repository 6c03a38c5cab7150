//! The statements whose SQLite and PostgreSQL spellings differ, side by side.
//! Everything else is written once, in the SQL both accept.

/// One backend's spelling of each statement that differs.
///
/// `e2e_sum_ns` saturates at the ends of a 64-bit integer on both backends,
/// as the aggregator's own sum does: it only gets there with a sender clock
/// far off (a second of delay per probe would take nine billion probes in one
/// bucket), and a saturated sum stays an integer that every reader decodes.
/// SQLite turns an overflowing integer `+` into a REAL, which the `CAST`
/// clamps back to the integer limits; PostgreSQL's bigint `+` fails instead,
/// so it adds in numeric and clamps.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// Moves `runs.first_ns` back to `$1` for run `$2`.
    pub first_ns: &'static str,
    pub link_buckets: &'static str,
    pub path_buckets: &'static str,
    /// `t_ns`, the partition key, follows `bucket` in the bucket tables.
    pub bucket_start: bool,
}

pub(crate) const SQLITE: Dialect = Dialect {
    first_ns: "UPDATE runs SET first_ns = min(COALESCE(first_ns, $1), $1) WHERE id = $2",
    link_buckets: "ON CONFLICT (run_id, link_id, bucket) DO UPDATE SET \
        samples = samples + excluded.samples, \
        qdepth_min = min(qdepth_min, excluded.qdepth_min), \
        qdepth_sum = qdepth_sum + excluded.qdepth_sum, \
        qdepth_max = max(qdepth_max, excluded.qdepth_max), \
        qdelay_min = min(qdelay_min, excluded.qdelay_min), \
        qdelay_sum = qdelay_sum + excluded.qdelay_sum, \
        qdelay_max = max(qdelay_max, excluded.qdelay_max)",
    path_buckets: "ON CONFLICT (run_id, path_id, bucket) DO UPDATE SET \
        probes = probes + excluded.probes, lost = lost + excluded.lost, \
        duplicates = duplicates + excluded.duplicates, \
        reordered = reordered + excluded.reordered, \
        e2e_sum_ns = CAST(e2e_sum_ns + excluded.e2e_sum_ns AS INTEGER), \
        e2e_max_ns = max(e2e_max_ns, excluded.e2e_max_ns)",
    bucket_start: false,
};

/// PostgreSQL needs the table named in `DO UPDATE` and spells the two-value
/// minimum `LEAST`. Without the saturating `e2e_sum_ns`, one bucket whose sum
/// overflows would fail its batch, and hold it back, for ever.
pub(crate) const POSTGRES: Dialect = Dialect {
    first_ns: "UPDATE runs SET first_ns = LEAST(COALESCE(first_ns, $1), $1) WHERE id = $2",
    link_buckets: "ON CONFLICT (run_id, link_id, bucket, t_ns) DO UPDATE SET \
        samples = b.samples + excluded.samples, \
        qdepth_min = LEAST(b.qdepth_min, excluded.qdepth_min), \
        qdepth_sum = b.qdepth_sum + excluded.qdepth_sum, \
        qdepth_max = GREATEST(b.qdepth_max, excluded.qdepth_max), \
        qdelay_min = LEAST(b.qdelay_min, excluded.qdelay_min), \
        qdelay_sum = b.qdelay_sum + excluded.qdelay_sum, \
        qdelay_max = GREATEST(b.qdelay_max, excluded.qdelay_max)",
    path_buckets: "ON CONFLICT (run_id, path_id, bucket, t_ns) DO UPDATE SET \
        probes = b.probes + excluded.probes, lost = b.lost + excluded.lost, \
        duplicates = b.duplicates + excluded.duplicates, \
        reordered = b.reordered + excluded.reordered, \
        e2e_sum_ns = LEAST(GREATEST(b.e2e_sum_ns::numeric + excluded.e2e_sum_ns, \
            -9223372036854775808), 9223372036854775807)::bigint, \
        e2e_max_ns = GREATEST(b.e2e_max_ns, excluded.e2e_max_ns)",
    bucket_start: true,
};
