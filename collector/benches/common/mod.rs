//! Helpers the collector's benches share.

use intpath_collector::parse::Probe;

/// `p` as sent again in a later round, `round_ns` apart: later sequence
/// numbers and send times, so replaying one captured set keeps buckets moving
/// instead of folding every round into the same ones.
pub fn in_round(p: &Probe, round: u32, round_ns: u64) -> Probe {
    let mut p = p.clone();
    p.sequence += round * 1_000_000;
    p.send_ns += u64::from(round) * round_ns;
    p
}
