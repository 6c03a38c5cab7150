//! Wall-clock time as the wire and the store carry it: nanoseconds since the
//! Unix epoch. Probes carry their send time so; the collector stamps arrivals
//! and the store stamps runs and spans with the same clock.

/// This host's clock, ns since the Unix epoch (0 for a clock set before it).
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}
