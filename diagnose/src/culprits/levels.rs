//! What the fabric's links do when nothing is wrong with them, for the
//! candidates that INT compares with the other links rather than with
//! their own quiet windows: the cleanest link's loss rate, and the links'
//! typical queueing and its spread.

use super::candidates::Candidate;
use super::stats::normal_upper_tail;
use super::timeline::{self, Moments, Series};
use super::{CulpritKind, Inputs};

/// The loss rate of the cleanest link probes cross, at least 10⁻⁴ so that
/// a fabric that lost nothing still gives a finite expectation. (Not the
/// median: a plan of few paths leaves half the links on the lossy one.)
pub(super) fn typical_loss(inp: &Inputs<'_>) -> f64 {
    (0..inp.index.links.len())
        .filter(|&l| inp.index.measured[l])
        .map(|l| inp.link_loss[l])
        .fold(f64::INFINITY, f64::min)
        .max(1e-4)
}

/// What the fabric's links queue per crossing when nothing is wrong with
/// them: the median of the links' means, and how far links' means spread
/// around it, on a log scale (queueing grows with a link's load many times
/// over, so busier links differ from the rest by a factor, not by a
/// constant): the MAD of the log means, scaled to a normal σ. A link is
/// compared with the other links, not only with its own sampling error:
/// with thousands of crossings, that error alone would call half the
/// fabric hot.
#[derive(Debug, Clone, Copy)]
pub(super) struct QueueLevels {
    /// Median of the links' mean queueing per crossing, ns.
    pub median: f64,
    /// Spread of the links' log means.
    sigma: f64,
}

/// Means below this (ns) are taken as this on the log scale: an idle link
/// is not infinitely cooler than one queueing a packet now and then.
const QUEUE_FLOOR_NS: f64 = 1_000.0;

impl QueueLevels {
    pub fn of(cands: &[Candidate]) -> Self {
        let mut logs: Vec<f64> = cands
            .iter()
            .filter(|c| c.kind == CulpritKind::Link && c.series.calls() > 0)
            .map(|c| c.series.mean().max(QUEUE_FLOOR_NS).ln())
            .collect();
        let median = timeline::median(&mut logs);
        let mut dev: Vec<f64> = logs.iter().map(|m| (m - median).abs()).collect();
        QueueLevels {
            median: median.exp(),
            sigma: 1.4826 * timeline::median(&mut dev),
        }
    }

    /// One-sided p-value that the calls of `s` crossed a link hotter than
    /// the fabric's links: their log mean against the links' spread and
    /// its own standard error.
    pub fn p_above(&self, s: &Series) -> f64 {
        let n = s.calls() as f64;
        if n < 2.0 {
            return 1.0;
        }
        let mean = s.mean();
        let var = Moments::of(s).var();
        let m = mean.max(QUEUE_FLOOR_NS);
        let sd = (self.sigma * self.sigma + var / n / (m * m)).sqrt();
        let z = m.ln() - self.median.max(QUEUE_FLOOR_NS).ln();
        if sd <= 0.0 {
            return if z > 0.0 { 0.0 } else { 1.0 };
        }
        normal_upper_tail(z / sd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::culprits::timeline::Timeline;

    /// A link whose 2000 crossings queued `mean_us` on average, ±20 %.
    fn link(t: &Timeline, mean_us: f64) -> Candidate {
        let mut c = Candidate::new(CulpritKind::Link, format!("{mean_us}"), t, None);
        for i in 0..2000 {
            let wobble = if i % 2 == 0 { 0.8 } else { 1.2 };
            c.series.add(i % t.blocks(), mean_us * 1e3 * wobble);
        }
        c
    }

    #[test]
    fn a_link_is_hot_against_the_other_links_not_its_own_error_alone() {
        let t = Timeline::new(0, 9_999_999_999, 400);
        // Links carry different traffic: 20–40 µs is the fabric's spread.
        let mut links: Vec<Candidate> = (0..21).map(|i| link(&t, 20.0 + i as f64)).collect();
        links.push(link(&t, 1000.0));
        let levels = QueueLevels::of(&links);
        // The busiest ordinary link, thousands of crossings past the
        // median, is within the spread; an incast's link is not.
        assert!(levels.p_above(&links[20].series) > 0.01, "{levels:?}");
        assert!(levels.p_above(&links[21].series) < 1e-6, "{levels:?}");
    }
}
