//! Which links of a lossy path lost its probes, where the switches' port
//! counters can tell.

use intpath_store::counters::LinkCount;
use intpath_store::samples::{PathLoss, Run};
use std::collections::HashMap;

/// A lossy path's loss is put on the links whose port counters lost at
/// least this share of the path's worst link's rate: the others' counts
/// differ only by the moment the two ends were read.
const CARRIER_SHARE: f64 = 0.1;

/// The counters must account for at least this share of the path's probe
/// loss before they decide where it happened: a queue's tail drops happen
/// before the egress counter, so a path that lost to a full queue shows
/// no counter loss, and its loss stays with all its links.
const EXPLAINED_SHARE: f64 = 0.5;

/// Per path whose probe loss the port counters account for: the run link
/// ids that lost it. Paths not listed keep their loss on every link.
pub(super) fn carriers(
    run: &Run,
    losses: &[PathLoss],
    counts: &[Option<LinkCount>],
) -> HashMap<u16, Vec<u32>> {
    let mut probes: HashMap<u16, (i64, i64)> = HashMap::new();
    for pl in losses {
        let t = probes.entry(pl.path).or_default();
        t.0 += pl.probes.max(0) + pl.lost.max(0);
        t.1 += pl.lost.max(0);
    }
    let rate = |l: u32| counts.get(l as usize).copied().flatten().map(|c| c.rate());
    run.paths
        .iter()
        .filter_map(|(path, links)| {
            let &(sent, lost) = probes.get(path)?;
            if lost == 0 {
                return None;
            }
            let rates: Vec<(u32, f64)> =
                links.iter().filter_map(|&l| Some((l, rate(l)?))).collect();
            let explained: f64 = rates.iter().map(|(_, r)| r).sum();
            if explained < EXPLAINED_SHARE * lost as f64 / sent as f64 {
                return None;
            }
            let worst = rates.iter().map(|&(_, r)| r).fold(0.0, f64::max);
            let lossy = rates
                .into_iter()
                .filter(|&(_, r)| r >= CARRIER_SHARE * worst)
                .map(|(l, _)| l)
                .collect();
            Some((*path, lossy))
        })
        .collect()
}
