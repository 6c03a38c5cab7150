//! A hidden leg's one-way delay under INT: the base plus the queues INT's
//! probes saw on its links at that moment, corrected by what visible RPCs
//! over the same link a moment away measured that the probes missed.

use super::accuracy::pearson;
use super::int_bounds::quantile;
use super::view::Shift;
use crate::evidence::Evidence;
use crate::path::Resolver;
use crate::Diagnosis;
use std::collections::BTreeMap;

/// One-way delay outside the queues INT sees: low, typical and high.
#[derive(Debug, Clone, Copy)]
pub(super) struct Base {
    pub lo: f64,
    pub mid: f64,
    pub hi: f64,
}

/// How far around a hidden leg's moment the visible RPCs over the same
/// link are taken as samples of its queue (a burst's edge moves on this
/// scale), and how close two visible legs must be to measure how alike
/// such samples are.
const RESIDUAL_WINDOW_NS: i64 = 1_000_000;

/// What a hidden leg's delay is estimated from under
/// [`Mode::Int`](super::int_bounds::Mode::Int).
pub(super) struct Legs<'a> {
    ev: &'a Evidence,
    base: Base,
    links: Vec<LinkResiduals>,
}

/// The visible legs over one link: each one's moment and residual (its
/// one-way delay less the base and INT's queue estimate, less its own
/// path's median residual), sorted by moment, and what a residual says
/// of another a moment away on the same link.
#[derive(Debug, Default)]
struct LinkResiduals {
    at: Vec<(i64, f64)>,
    /// Covariance over variance of residuals within [`RESIDUAL_WINDOW_NS`]
    /// of each other: the share of a neighbour's residual that is the
    /// link's queue rather than its own hosts' noise (0 where the link's
    /// residuals are only noise, towards 1 where a queue INT's probes
    /// missed dominates them).
    likeness: f64,
}

impl<'a> Legs<'a> {
    /// The residuals of every visible RPC's two legs, each against
    /// [`Self::int`] at the moment it left its sender.
    pub(super) fn new(
        ev: &'a Evidence,
        base: Base,
        dg: &Diagnosis,
        visible: &[usize],
        res: &mut Resolver,
        off: &dyn Fn(Option<u16>) -> f64,
    ) -> Self {
        let mut legs = Legs {
            ev,
            base,
            links: Vec::new(),
        };
        // Per directed host pair (the sender's host, the receiver's), in a
        // fixed order: legs at the same moment must sort the same way
        // whatever the hash seed.
        let mut by_pair: BTreeMap<(u16, u16), Vec<(i64, f64)>> = BTreeMap::new();
        for &i in visible {
            let e = &dg.edges[i];
            let Ok(p) = res.path(&dg.index, e.client_host, e.server_host) else {
                continue;
            };
            let theta = off(Some(e.server_host)) - off(Some(e.client_host));
            let one_way = [
                (
                    &p.forward,
                    (e.client_host, e.server_host),
                    e.cs,
                    (e.sr - e.cs) as f64 - theta,
                ),
                (
                    &p.reverse,
                    (e.server_host, e.client_host),
                    e.ss,
                    (e.cr - e.ss) as f64 + theta,
                ),
            ];
            for (links, pair, t, d) in one_way {
                if !links.is_empty() {
                    let r = d - legs.int(links, t).t;
                    by_pair.entry(pair).or_default().push((t, r));
                }
            }
        }
        let mut links: Vec<LinkResiduals> = Vec::new();
        for ((from, to), mut rs) in by_pair {
            // Each path's own stacks and propagation differ from the base
            // by a constant that is no queue's.
            let mut v: Vec<f64> = rs.iter().map(|&(_, r)| r).collect();
            let bias = quantile(&mut v, 0.5);
            for x in &mut rs {
                x.1 -= bias;
            }
            let Ok(path) = res.path(&dg.index, from, to) else {
                continue;
            };
            for &l in path
                .forward
                .iter()
                .filter(|&&l| dg.index.measured[l as usize])
            {
                if links.len() <= l as usize {
                    links.resize_with(l as usize + 1, LinkResiduals::default);
                }
                links[l as usize].at.extend_from_slice(&rs);
            }
        }
        for l in &mut links {
            l.at.sort_by_key(|&(t, _)| t);
            l.likeness = likeness(&l.at);
        }
        legs.links = links;
        legs
    }

    /// The base plus INT's queue on `links` at `t`, with the error that
    /// estimate may have where the probes either side disagree.
    fn int(&self, links: &[u32], t: i64) -> Shift {
        let (mut q, mut lo, mut hi, mut err) = (0.0, 0.0, 0.0, 0.0);
        for &l in links {
            if let Some(est) = self.ev.at(l, t) {
                q += est.mean;
                lo += est.lo;
                hi += est.hi;
                // Between two probes that disagree the queue changed
                // somewhere: the straight line between them is off by up
                // to half their difference, either way.
                err += ((est.hi - est.lo) / 2.0).powi(2);
            }
        }
        Shift {
            t: self.base.mid + q,
            lo: self.base.lo + lo,
            hi: self.base.hi + hi,
            sd: err.sqrt(),
        }
    }

    /// [`Self::int`], moved by what the visible RPCs over the same link
    /// either side of `t` found INT's estimate missed. Probes are sparse
    /// next to requests: a burst that began and ended between two probes,
    /// or whose edge fell between them, is missed or misplaced, and an RPC
    /// that crossed the same queue a moment away measured it. The link
    /// taken is the one of `links` whose residuals are most alike a moment
    /// apart (one queue at a time dominates a path), and the neighbours'
    /// residual counts by that likeness.
    pub(super) fn corrected(&self, links: &[u32], t: i64) -> Shift {
        let s = self.int(links, t);
        let Some(link) = links
            .iter()
            .filter_map(|&l| self.links.get(l as usize))
            .max_by(|a, b| a.likeness.total_cmp(&b.likeness))
            .filter(|l| l.likeness > 0.0)
        else {
            return s;
        };
        let near = &link.at;
        let b = near.partition_point(|&(x, _)| x < t);
        let close = |k: Option<usize>| {
            k.and_then(|k| near.get(k))
                .filter(|&&(x, _)| (x - t).abs() <= RESIDUAL_WINDOW_NS)
                .map(|&(_, r)| r)
        };
        let r = match (close(b.checked_sub(1)), close(Some(b))) {
            (Some(a), Some(c)) => (a + c) / 2.0,
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return s,
        };
        // The probes either side still bound the queue: the neighbours
        // place the point within them, and leave the bounds as they were
        // (widened by the correction, the candidate windows took in calls
        // of other requests: BENCHMARKS, issue 33).
        Shift {
            t: (s.t + link.likeness * r).clamp(s.lo.min(s.hi), s.hi.max(s.lo)),
            ..s
        }
    }
}

/// Covariance over variance of successive residuals (sorted by moment)
/// that are within [`RESIDUAL_WINDOW_NS`] of each other, clamped to 0..=1.
fn likeness(at: &[(i64, f64)]) -> f64 {
    let (a, b): (Vec<f64>, Vec<f64>) = at
        .windows(2)
        .filter(|w| w[1].0 - w[0].0 <= RESIDUAL_WINDOW_NS)
        .map(|w| (w[0].1, w[1].1))
        .unzip();
    pearson(&a, &b).map_or(0.0, |r| r.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::LinkIndex;
    use intpath_core::topo::TopologyBuilder;
    use intpath_store::samples::{LinkSample, Run};
    use intpath_store::StoreMode;

    /// Two switches, their link probed at 0 and 20 ms with the queueing
    /// delays `q` (ns).
    fn probed(q: [i64; 2]) -> Evidence {
        let mut b = TopologyBuilder::new("pair");
        b.switch("s1", 1);
        b.switch("s2", 2);
        b.link("s1", Some(1), "s2", Some(1));
        let index = LinkIndex::new(&b.build().unwrap());
        let run = Run {
            id: 1,
            bucket_ns: 1_000_000_000,
            store: StoreMode::Raw,
            span_ns: Some((0, 20_000_000)),
            paths: vec![(0, vec![0])],
            links: index.links.clone(),
            topology: None,
        };
        let hop = |at_ns, qdelay_ns| LinkSample {
            link: 0,
            at_ns,
            qdelay_ns,
            wire_ns: None,
        };
        let samples = [hop(0, q[0]), hop(20_000_000, q[1])];
        Evidence::new(&index, &run, &samples, &[], &[])
    }

    const BASE: Base = Base {
        lo: 40_000.0,
        mid: 50_000.0,
        hi: 60_000.0,
    };

    fn legs(ev: &Evidence, at: Vec<(i64, f64)>) -> Legs<'_> {
        let likeness = likeness(&at);
        Legs {
            ev,
            base: BASE,
            links: vec![LinkResiduals { at, likeness }],
        }
    }

    /// A queue of 400 µs from 9 to 11 ms that INT's probes missed, seen
    /// by visible legs every 100 µs from 5 to 15 ms, with ±10 µs of host
    /// noise.
    fn missed_burst() -> Vec<(i64, f64)> {
        (0..100)
            .map(|k| {
                let t = 5_000_000 + k * 100_000;
                let burst = if (9_000_000..11_000_000).contains(&t) {
                    400_000.0
                } else {
                    0.0
                };
                (t, burst + if k % 2 == 0 { 10_000.0 } else { -10_000.0 })
            })
            .collect()
    }

    #[test]
    fn residuals_that_are_only_noise_are_not_alike_and_a_missed_queue_is() {
        let noise: Vec<(i64, f64)> = (0..200)
            .map(|k| (k * 100_000, if k % 3 == 0 { 20_000.0 } else { -10_000.0 }))
            .collect();
        assert!(likeness(&noise) < 0.1, "{}", likeness(&noise));
        let burst = missed_burst();
        assert!(likeness(&burst) > 0.9, "{}", likeness(&burst));
        // Legs farther apart than the window say nothing of each other.
        let sparse: Vec<(i64, f64)> = burst.iter().map(|&(t, r)| (t * 20, r)).collect();
        assert_eq!(likeness(&sparse), 0.0);
    }

    #[test]
    fn a_missed_queue_moves_the_estimate_as_far_as_the_probes_allow() {
        // The probes either side disagree (0 and 1 ms): the queue may be
        // anywhere between, and the neighbours place it.
        let ev = probed([0, 1_000_000]);
        let l = legs(&ev, missed_burst());
        let int = l.int(&[0], 10_000_000);
        assert_eq!(int.t, BASE.mid + 500_000.0);
        let c = l.corrected(&[0], 10_000_000);
        let moved = c.t - int.t;
        assert!((350_000.0..=400_000.0).contains(&moved), "{moved}");
        assert_eq!((c.lo, c.hi, c.sd), (int.lo, int.hi, int.sd));
        // Outside the burst the neighbours agree with INT.
        let quiet = l.corrected(&[0], 6_000_000);
        assert!((quiet.t - l.int(&[0], 6_000_000).t).abs() < 20_000.0);
        // Where both probes saw an empty queue, the point stays within
        // what the base allows.
        let ev = probed([0, 0]);
        let c = legs(&ev, missed_burst()).corrected(&[0], 10_000_000);
        assert_eq!(c.t, BASE.hi);
        // No neighbour within the window: INT alone.
        let far = legs(&ev, missed_burst()).corrected(&[0], 17_000_000);
        assert_eq!(far.t, BASE.mid);
    }
}
