//! What "normal" is for an RPC edge: medians of its class (caller →
//! callee), the spread that makes one slow, the excess of the calls an edge
//! waited on, and how much a service's own time varies when nothing is
//! wrong (its noise), so that noise is not read as a fault.

use crate::rpc::{union_within, Callee, Edge};
use std::collections::HashMap;

/// Medians of a class of edges, and the spread that makes one slow.
///
/// A call's time has three parts, each with its own median and spread: the
/// callee's own work (its service time less the time it waited on its own
/// calls), that waiting, and the network. The class's normal total is
/// their sum. A median of the total (or of the whole service time) breaks
/// down once half the class is slowed: a congested link on the class's
/// only path plus a slow callee, or a slow callee whose own calls cross a
/// congested link, move the median and its absolute deviation into the
/// faults, and no call is slow any more. Each fault moves one part, so the
/// parts keep their medians until one fault alone slows half the calls.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Baseline {
    pub own: f64,
    pub wait: f64,
    pub network: f64,
    /// Spread of the total: the parts' median absolute deviations added
    /// as independent noise.
    pub mad: f64,
}

impl Baseline {
    pub fn total(&self) -> f64 {
        self.own + self.wait + self.network
    }
}

pub(crate) fn median(v: &mut [i64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = v.len() / 2;
    *v.select_nth_unstable(m).1 as f64
}

/// Median and median absolute deviation.
fn median_mad(v: &mut [i64]) -> (f64, f64) {
    let m = median(v);
    let mut dev: Vec<i64> = v.iter().map(|&x| (x as f64 - m).abs() as i64).collect();
    (m, median(&mut dev))
}

/// Per edge: how long its server waited on its own calls (the union of
/// their client spans within its server span; both on the server's clock).
pub(crate) fn waiting(edges: &[Edge]) -> Vec<i64> {
    let mut kids: Vec<Vec<(i64, i64)>> = vec![Vec::new(); edges.len()];
    let calls = edges.iter().filter_map(|e| Some((e.parent?, e.cs, e.cr)));
    let unjoined = edges
        .iter()
        .enumerate()
        .flat_map(|(i, e)| e.unjoined.iter().map(move |u| (i as u32, u.cs, u.cr)));
    for (p, cs, cr) in calls.chain(unjoined) {
        kids[p as usize].push((cs, cr));
    }
    (kids.into_iter().zip(edges))
        .map(|(mut k, e)| union_within(&mut k, e.sr, e.ss))
        .collect()
}

/// Per (caller, callee) class; `wait` from [`waiting`].
pub(crate) fn baselines(edges: &[Edge], wait: &[i64]) -> HashMap<(u16, u16), Baseline> {
    let mut by: HashMap<(u16, u16), Vec<usize>> = HashMap::new();
    for (i, e) in edges.iter().enumerate() {
        by.entry((e.caller, e.callee)).or_default().push(i);
    }
    by.into_iter()
        .map(|(k, es)| {
            let mut own: Vec<i64> = es.iter().map(|&i| edges[i].service() - wait[i]).collect();
            let mut w: Vec<i64> = es.iter().map(|&i| wait[i]).collect();
            let mut n: Vec<i64> = es.iter().map(|&i| edges[i].network()).collect();
            let (own, mad_o) = median_mad(&mut own);
            let (wait, mad_w) = median_mad(&mut w);
            let (network, mad_n) = median_mad(&mut n);
            let b = Baseline {
                own,
                wait,
                network,
                mad: (mad_o * mad_o + mad_w * mad_w + mad_n * mad_n).sqrt(),
            };
            (k, b)
        })
        .collect()
}

/// Excess of the children each edge waited on, signed (a child faster than
/// its median gives back time), as [`grouped`] adds them. A call its callee
/// never answered is a child too: its wait beyond the class's usual answer
/// (all of it where no call of the class was answered).
pub(crate) fn waited_on(
    edges: &[Edge],
    excess: &[f64],
    base: &HashMap<(u16, u16), Baseline>,
) -> Vec<f64> {
    let mut kids: Vec<Vec<(i64, i64, f64)>> = vec![Vec::new(); edges.len()];
    for (i, e) in edges.iter().enumerate() {
        if let Some(p) = e.parent {
            kids[p as usize].push((e.cs, e.cr, excess[i]));
        }
        for u in &e.unjoined {
            if let Callee::Silent { service: s, .. } = u.callee {
                let usual = base.get(&(e.callee, s)).map_or(0.0, Baseline::total);
                kids[i].push((u.cs, u.cr, (u.cr - u.cs) as f64 - usual));
            }
        }
    }
    kids.into_iter().map(|mut k| grouped(&mut k)).collect()
}

/// Per edge: the excess of its server's calls to callees without spans of
/// their own (a database), each call against the median of the same
/// service's calls to the same callee, added as [`grouped`] adds them; and
/// the callee whose calls added the most.
pub(crate) fn dependency_waits(edges: &[Edge]) -> Vec<(f64, Option<u16>)> {
    let mut durations: HashMap<(u16, u16), Vec<i64>> = HashMap::new();
    for e in edges {
        for u in &e.unjoined {
            if let Some(d) = u.callee.dependency() {
                durations
                    .entry((e.callee, d))
                    .or_default()
                    .push(u.cr - u.cs);
            }
        }
    }
    let usual: HashMap<(u16, u16), f64> = (durations.into_iter())
        .map(|(k, mut v)| (k, median(&mut v)))
        .collect();
    edges
        .iter()
        .map(|e| {
            let mut calls: Vec<(i64, i64, f64)> = Vec::new();
            let mut most: Option<(u16, f64)> = None;
            for u in &e.unjoined {
                let Some(d) = u.callee.dependency() else {
                    continue;
                };
                let excess = (u.cr - u.cs) as f64 - usual[&(e.callee, d)];
                calls.push((u.cs, u.cr, excess));
                if most.is_none_or(|(_, m)| excess > m) {
                    most = Some((d, excess));
                }
            }
            (grouped(&mut calls), most.map(|(d, _)| d))
        })
        .collect()
}

/// Calls' excesses `(cs, cr, excess)` as their caller waited them out:
/// calls overlapping in time ran in parallel (the slowest counts), the
/// others in sequence (they add). A call that starts the moment the
/// previous one returned is the next step of a sequence, not a parallel
/// sibling.
fn grouped(calls: &mut [(i64, i64, f64)]) -> f64 {
    calls.sort_unstable_by_key(|c| c.0);
    let (mut sum, mut group_max, mut group_end) = (0.0, f64::NEG_INFINITY, i64::MIN);
    for &mut (cs, cr, excess) in calls {
        if cs >= group_end && group_max > f64::NEG_INFINITY {
            sum += group_max;
            group_max = f64::NEG_INFINITY;
        }
        group_end = group_end.max(cr);
        group_max = group_max.max(excess);
    }
    if group_max > f64::NEG_INFINITY {
        sum += group_max;
    }
    sum
}

/// Per callee service: the `quantile` of its own service excess over the
/// edges that are not slow, i.e. how far its work alone strays (cache
/// misses, lognormal tails) without any fault. An own service excess below
/// it is noise, not a cause. Zero for services with no edges that are not
/// slow.
pub(crate) fn service_noise(
    edges: &[Edge],
    service_excess: &[f64],
    slow: &[bool],
    quantile: f64,
) -> HashMap<u16, f64> {
    let mut by: HashMap<u16, Vec<f64>> = HashMap::new();
    for ((e, &x), &s) in edges.iter().zip(service_excess).zip(slow) {
        if !s {
            by.entry(e.callee).or_default().push(x);
        }
    }
    by.into_iter()
        .map(|(k, mut v)| {
            let i = ((v.len() - 1) as f64 * quantile.clamp(0.0, 1.0)).round() as usize;
            let x = *v.select_nth_unstable_by(i, f64::total_cmp).1;
            (k, x.max(0.0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(parent: Option<u32>, cs: i64, cr: i64) -> Edge {
        Edge {
            sr: cs,
            ss: cr,
            parent,
            ..Edge::call(0, 1, cs, cr)
        }
    }

    #[test]
    fn touching_calls_are_a_sequence_and_overlapping_ones_parallel() {
        // Root 0 calls 1 and 2 in parallel, then 3 the moment both returned.
        let edges = [
            edge(None, 0, 100),
            edge(Some(0), 10, 50),
            edge(Some(0), 10, 60),
            edge(Some(0), 60, 90),
        ];
        let excess = [0.0, 5.0, 3.0, 4.0];
        let none = HashMap::new();
        assert_eq!(waited_on(&edges, &excess, &none)[0], 5.0 + 4.0);
        // A child faster than usual gives its time back.
        let excess = [0.0, 5.0, 3.0, -2.0];
        assert_eq!(waited_on(&edges, &excess, &none)[0], 3.0);
        assert_eq!(waited_on(&edges, &excess, &none)[1], 0.0);
    }

    #[test]
    fn waiting_is_the_union_of_the_calls_within_the_server_span() {
        // Root 0 (server 0..100) calls 1 and 2 overlapping (10..50, 30..60)
        // and 3 later (70..90): it waited 50 + 20 ns.
        let edges = [
            edge(None, 0, 100),
            edge(Some(0), 10, 50),
            edge(Some(0), 30, 60),
            edge(Some(0), 70, 90),
        ];
        assert_eq!(waiting(&edges), vec![70, 0, 0, 0]);
    }

    #[test]
    fn a_call_that_never_reached_its_callee_is_waited_on_too() {
        // Root 0 (server 0..100) calls 1 (10..30) and makes a call that got
        // no server span (40..95, a timeout): it waited 20 + 55 ns.
        let mut root = edge(None, 0, 100);
        root.unjoined.push(crate::rpc::Unjoined {
            cs: 40,
            cr: 95,
            callee: crate::rpc::Callee::Silent {
                service: 1,
                from: Some(1),
            },
        });
        // Service 1 calls itself, in 20 ns as usual: the unanswered call's
        // 55 are 35 beyond that, below the root.
        let mut child = edge(Some(0), 10, 30);
        child.caller = 1;
        let edges = [root, child];
        assert_eq!(waiting(&edges), vec![75, 0]);
        let base = baselines(&edges, &waiting(&edges));
        assert_eq!(waited_on(&edges, &[0.0; 2], &base)[0], 35.0);
    }

    #[test]
    fn a_slow_query_is_its_databases_excess_not_a_calls_below() {
        use crate::rpc::{Callee, Unjoined};
        let query = |cs, cr, dependency: Option<u16>| Unjoined {
            cs,
            cr,
            callee: dependency.map_or(Callee::Unknown, Callee::Dependency),
        };
        // Five requests query database 0 twice in sequence (10 ns each) and
        // cache 1 alongside the second; in the last, the second query takes
        // 40 ns, the cache 15.
        let edges: Vec<Edge> = (0..5)
            .map(|i| {
                let mut e = edge(None, 0, 100);
                let slow = if i == 4 { 30 } else { 0 };
                e.unjoined = vec![
                    query(10, 20, Some(0)),
                    query(30, 40 + slow, Some(0)),
                    query(30, 40 + slow / 6, Some(1)),
                    query(50, 95, None),
                ];
                e
            })
            .collect();
        let waits = dependency_waits(&edges);
        assert_eq!(waits[0], (0.0, Some(0)));
        // The parallel cache call is not added to the query's 30.
        assert_eq!(waits[4], (30.0, Some(0)));
        // No call below it was slower than usual.
        let base = baselines(&edges, &waiting(&edges));
        assert_eq!(waited_on(&edges, &[0.0; 5], &base), vec![0.0; 5]);
    }

    #[test]
    fn a_class_slowed_by_two_faults_keeps_its_normal() {
        // 300 calls: a third 8 ms late in the network, another third 10 ms
        // late in the callee's own work; the median total is inside the
        // faults, the parts' medians are not.
        let edges: Vec<Edge> = (0..300)
            .map(|i| {
                let (own, net) = match i % 3 {
                    0 => (500_000 + i, 400_000),
                    1 => (500_000 + i, 8_400_000),
                    _ => (10_500_000 + i, 400_000),
                };
                let mut e = edge(None, 0, own + net);
                e.sr = net / 2;
                e.ss = e.sr + own;
                e
            })
            .collect();
        let wait = waiting(&edges);
        let b = baselines(&edges, &wait)[&(0, 1)];
        assert!((b.total() - 900_150.0).abs() < 1_000.0, "{b:?}");
        assert!(b.mad < 100_000.0, "{b:?}");
    }

    #[test]
    fn noise_is_a_quantile_of_edges_that_are_not_slow() {
        let edges: Vec<Edge> = (0..101).map(|i| edge(None, i, i + 1)).collect();
        let excess: Vec<f64> = (0..101).map(f64::from).collect();
        let mut slow = vec![false; 101];
        slow[100] = true;
        // 0..=99 not slow: the 0.9 quantile is 89 (index round(99 * 0.9)).
        let noise = service_noise(&edges, &excess, &slow, 0.9);
        assert_eq!(noise[&1], 89.0);
    }
}
