//! Link culprits: one per directed link, its queueing and its loss evidence
//! together. A throttled link queues and then drops at its tail; listing
//! the queue and the drops as two culprits would let one fault take two of
//! the top places and push a second fault out of them.
//!
//! Each kind of evidence has its own quasi-experimental test, with the
//! right events: a queue is tested on slow requests (slow × crosses the
//! link), a loss on requests with a retransmission-sized gap (gap × crosses
//! the link), over all requests in both cases. A lossy link's few
//! retransmissions drown among the slow requests of everything else, but
//! stand out among gaps: nothing else makes a request wait an RTO.

use super::{ms, Culprit, Inputs};
use crate::stats::{benjamini_hochberg, fisher_greater, LnFactorial};
use serde_json::json;

/// False discovery rate a link's test must pass.
const FDR: f64 = 0.05;
/// Weight kept by evidence whose test did not pass.
const UNTESTED_WEIGHT: f64 = 0.01;

/// What the per-edge pass counted for the links.
pub(super) struct LinkCounts {
    /// Excess explained per link: queueing, loss.
    pub queue: Vec<f64>,
    pub loss: Vec<f64>,
    /// Edges crossing each link; of them, slow ones and ones with a gap.
    pub crossing: Vec<u64>,
    pub slow_crossing: Vec<u64>,
    pub gap_crossing: Vec<u64>,
    /// Edges in all; slow ones; ones with a gap.
    pub edges: u64,
    pub slow: u64,
    pub gaps: u64,
}

/// One test across links: `events[l]` of the `crossing[l]` edges crossing
/// link `l` had the event, `total_events` of `total` edges in all. Returns
/// one-sided Fisher p-values and their Benjamini–Hochberg q-values.
fn test(
    lf: &LnFactorial,
    events: &[u64],
    crossing: &[u64],
    total_events: u64,
    total: u64,
) -> (Vec<f64>, Vec<f64>) {
    let p: Vec<f64> = events
        .iter()
        .zip(crossing)
        .map(|(&a, &n)| {
            let c = n - a;
            fisher_greater(lf, a, total_events - a, c, total - total_events - c)
        })
        .collect();
    let q = benjamini_hochberg(&p);
    (p, q)
}

/// The link culprits: a link is listed when it explains excess or is hot.
/// Its kind is the evidence that weighs more (`link` for queueing, `loss`),
/// `evidence.kinds` lists every kind it has.
pub(super) fn link_culprits(inp: &Inputs<'_>, c: &LinkCounts) -> Vec<Culprit> {
    let lf = LnFactorial::new(c.edges as usize);
    let (qp, qq) = test(&lf, &c.slow_crossing, &c.crossing, c.slow, c.edges);
    let (lp, lq) = test(&lf, &c.gap_crossing, &c.crossing, c.gaps, c.edges);
    let hot = hot_level(inp);
    let weight = |q: f64| if q < FDR { 1.0 } else { UNTESTED_WEIGHT };
    let mut out = Vec::new();
    for l in 0..inp.index.links.len() {
        let is_hot = inp.link_heat[l] > hot;
        if c.queue[l] <= 0.0 && c.loss[l] <= 0.0 && !is_hot {
            continue;
        }
        // A queue's excess is weighed by how often crossing requests are
        // slow; a loss's share already is (see `split_by_rate`).
        let precision = c.slow_crossing[l] as f64 / c.crossing[l].max(1) as f64;
        let queue_score = c.queue[l] * precision * weight(qq[l]);
        let loss_score = c.loss[l] * weight(lq[l]);
        let mut kinds = Vec::new();
        if c.queue[l] > 0.0 || is_hot {
            kinds.push("queueing");
        }
        if c.loss[l] > 0.0 {
            kinds.push("loss");
        }
        out.push(Culprit {
            kind: if loss_score > queue_score {
                "loss"
            } else {
                "link"
            },
            name: inp.index.name(l as u32),
            score: ms(queue_score + loss_score),
            evidence: json!({
                "kinds": kinds,
                "explained_ms": ms(c.queue[l] + c.loss[l]),
                "crossing": c.crossing[l],
                "queueing": {
                    "explained_ms": ms(c.queue[l]),
                    "slow_crossing": c.slow_crossing[l],
                    "fisher_p": qp[l],
                    "bh_q": qq[l],
                    "mean_queue_us": (inp.link_heat[l] / 1e3).round(),
                },
                "loss": {
                    "explained_ms": ms(c.loss[l]),
                    "gap_crossing": c.gap_crossing[l],
                    "fisher_p": lp[l],
                    "bh_q": lq[l],
                    "probe_loss": (inp.link_loss[l] * 1e4).round() / 1e4,
                },
                "hot_but_harmless": is_hot && (qq[l] >= FDR || c.queue[l] <= 0.0),
            }),
        });
    }
    out
}

/// Mean queueing delay above which a measured link counts as hot: three
/// times the median link's.
fn hot_level(inp: &Inputs<'_>) -> f64 {
    let mut heat: Vec<f64> = (0..inp.index.links.len())
        .filter(|&l| inp.index.measured[l])
        .map(|l| inp.link_heat[l])
        .collect();
    heat.sort_by(f64::total_cmp);
    3.0 * heat.get(heat.len() / 2).copied().unwrap_or(f64::INFINITY)
}
