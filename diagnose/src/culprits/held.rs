//! A service whose own time rose while calls of its own were stuck. A
//! service serves its requests from a pool of workers (threads, a
//! connection pool to each callee); calls stuck behind a lossy link or a
//! hung callee hold those workers, and the requests that come meanwhile
//! wait for one inside the service's span, before any call of theirs
//! starts: time the spans give as the service's own. Judged by the
//! requests it served while none of its calls were stuck, a service whose
//! own time had not changed there was held, and what held it is the
//! culprit named above it.

use super::candidates;
use super::decide::{Tested, FDR};
use super::explain::Judge;
use super::CulpritKind;
use crate::attribution::waiting;
use crate::rpc::{Callee, Edge};
use rand::rngs::StdRng;
use std::collections::HashMap;

/// Whom a call was to: a traced service or a dependency.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Class {
    Service(u16),
    Dependency(u16),
}

/// A call is stuck once in flight this many times as long as its class's
/// calls take at the median: past any tail a class's own work has (a
/// lognormal of σ 0.6 reaches it once in 16,000 calls), and long before a
/// timeout ends a call that will not be answered.
const STUCK_OVER_MEDIAN: i64 = 10;

/// Drops each named service, below another named culprit, whose requests
/// served with none of its calls stuck show no change of their own.
pub(super) fn held_by_stuck_calls(
    judge: &Judge<'_, '_>,
    named: &mut Vec<Tested>,
    rng: &mut StdRng,
) {
    let inp = judge.inp;
    let Some(top) = named.iter().map(|x| x.effect_ms).reduce(f64::max) else {
        return;
    };
    let wait = waiting(inp.edges);
    named.retain(|x| {
        // One named for calls it left unanswered is judged on those.
        let silent = x.c.silence.calls > 0 && x.c.silence.p <= FDR;
        if x.c.kind != CulpritKind::Service || x.effect_ms >= top || silent {
            return true;
        }
        let Some(s) = inp.services.iter().position(|n| *n == x.c.name) else {
            return true;
        };
        let s = s as u16;
        let stuck = Stuck::of(inp.edges, s);
        if stuck.spans.is_empty() {
            return true;
        }
        let free =
            candidates::own_work_where(inp, judge.t, &wait, s, |sr, ss| !stuck.during(sr, ss));
        let kept = judge.changed_as_is(&free, rng);
        tracing::debug!(
            service = %x.c.name,
            stuck = stuck.spans.len(),
            free_calls = free.calls(),
            calls = x.c.series.calls(),
            free_means_ms = ?free.window_means_ms(),
            kept = kept.is_some(),
            "held by its stuck calls?"
        );
        kept.is_some()
    });
}

/// When a service's calls were stuck, on its own clock.
struct Stuck {
    /// (from, until), by `from`.
    spans: Vec<(i64, i64)>,
    /// The latest `until` among `spans[..=i]`.
    reach: Vec<i64>,
}

impl Stuck {
    /// The calls service `s` made, each stuck from its class's median
    /// times [`STUCK_OVER_MEDIAN`] after it began until it ended. A class
    /// is the callee; a callee that answered none of them is stuck from
    /// the call's start.
    fn of(edges: &[Edge], s: u16) -> Stuck {
        let mut classes: HashMap<Class, Vec<i64>> = HashMap::new();
        let mut calls: Vec<(Class, i64, i64)> = Vec::new();
        for e in edges.iter().filter(|e| e.caller == s) {
            let class = Class::Service(e.callee);
            classes.entry(class).or_default().push(e.total());
            calls.push((class, e.cs, e.cr));
        }
        for u in (edges.iter().filter(|e| e.callee == s)).flat_map(|e| &e.unjoined) {
            let class = match u.callee {
                Callee::Silent { service, .. } => Class::Service(service),
                Callee::Dependency(d) => {
                    let class = Class::Dependency(d);
                    classes.entry(class).or_default().push(u.cr - u.cs);
                    class
                }
                Callee::Unknown => continue,
            };
            calls.push((class, u.cs, u.cr));
        }
        let median: HashMap<Class, i64> = (classes.into_iter())
            .map(|(class, mut v)| {
                let mid = v.len() / 2;
                (class, *v.select_nth_unstable(mid).1)
            })
            .collect();
        let mut spans: Vec<(i64, i64)> = (calls.into_iter())
            .map(|(class, cs, cr)| {
                let usual = median.get(&class).copied().unwrap_or(0);
                (cs + STUCK_OVER_MEDIAN * usual, cr)
            })
            .filter(|(from, until)| from < until)
            .collect();
        spans.sort_unstable();
        let reach = (spans.iter())
            .scan(i64::MIN, |r, &(_, until)| {
                *r = (*r).max(until);
                Some(*r)
            })
            .collect();
        Stuck { spans, reach }
    }

    /// Some call was stuck at some moment of `from..until`.
    fn during(&self, from: i64, until: i64) -> bool {
        let began = self.spans.partition_point(|&(f, _)| f < until);
        began > 0 && self.reach[began - 1] > from
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::Unjoined;

    #[test]
    fn a_call_is_stuck_from_ten_times_its_classs_median_until_it_ends() {
        // Service 0 calls service 1 ten times in 5 ms each, then once for
        // 3 s (a timeout) from t = 1000 ms; it also waits on a callee that
        // answered none of its calls, from 2000 to 2100 ms.
        let ms = 1_000_000;
        let mut edges: Vec<Edge> = (0..10)
            .map(|i| Edge::call(0, 1, i * 10 * ms, (i * 10 + 5) * ms))
            .collect();
        edges.push(Edge::call(0, 1, 1000 * ms, 4000 * ms));
        let mut request = Edge::call(2, 0, 1990 * ms, 2200 * ms);
        request.unjoined.push(Unjoined {
            cs: 2000 * ms,
            cr: 2100 * ms,
            callee: Callee::Silent {
                service: 3,
                from: None,
            },
        });
        edges.push(request);
        let stuck = Stuck::of(&edges, 0);
        assert_eq!(
            stuck.spans,
            [(1050 * ms, 4000 * ms), (2000 * ms, 2100 * ms)]
        );
        // Before the long call had taken ten of its class's medians: free.
        assert!(!stuck.during(1000 * ms, 1049 * ms));
        assert!(stuck.during(1049 * ms, 1051 * ms));
        assert!(stuck.during(3999 * ms, 4100 * ms));
        assert!(!stuck.during(4000 * ms, 4100 * ms));
        assert!(!stuck.during(0, 60 * ms), "the quick calls are never stuck");
        assert!(
            !Stuck::of(&edges, 1).during(0, 5000 * ms),
            "service 1 made no call"
        );
    }
}
