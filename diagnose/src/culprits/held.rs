//! A service whose own time rose while calls of its own were stuck. A
//! service serves its requests from a pool of workers (threads, a
//! connection pool to each callee); calls stuck behind a lossy link or a
//! hung callee hold those workers, and the requests that come meanwhile
//! wait for one inside the service's span, before any call of theirs
//! starts: time the spans give as the service's own. Judged by the
//! requests it served while none of its calls were stuck, a service whose
//! own time had not changed there was held, and what held it is the
//! culprit named above it.
//!
//! A server whose workers are all held may not even take a connection:
//! the requests then wait before its span begins, in its host's accept
//! queue, time the spans give as the host's. A host is judged the same
//! way, by its calls while none of its services' calls were stuck.

use super::candidates;
use super::change::FLOOR_MIN_CALLS;
use super::decide::{Tested, FDR};
use super::effect::STANDS_OUT;
use super::explain::Judge;
use super::timeline::{floor_of, median, Moments, Series, Timeline, BLOCKS_PER_WINDOW};
use super::{CulpritKind, Inputs};
use crate::attribution::waiting;
use crate::rpc::{Callee, Edge};
use rand::rngs::StdRng;
use std::collections::{HashMap, HashSet};

/// Whom a call was to: a traced service or a dependency.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Class {
    Service(u16),
    Dependency(u16),
    /// A call whose callee the spans do not say, or whose answer was
    /// rejected: the server span outlasted its client's (a timeout while
    /// the callee worked on), or took the call up after its caller gave
    /// up. Those are the calls stuck longest; each is judged against the
    /// slowest class its caller's calls usually take.
    Unknown,
}

/// A call is stuck once in flight this many times as long as its class's
/// calls usually take at the median ([`usual`]): past any tail a class's
/// own work has (a lognormal of σ 0.6 reaches it once in 16,000 calls),
/// and long before a timeout ends a call that will not be answered.
const STUCK_OVER_USUAL: i64 = 10;

/// Drops each named service or host, below another named culprit, whose
/// calls with none of its (or its services') calls stuck show no change.
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
        if x.effect_ms >= top || silent {
            return true;
        }
        let free = match x.c.kind {
            CulpritKind::Service => (inp.services.iter().position(|n| *n == x.c.name))
                .and_then(|s| service_while_free(inp, judge.t, &wait, s as u16)),
            CulpritKind::Host => match x.c.hosts[..] {
                [h] => host_while_free(inp, judge.t, h),
                _ => None,
            },
            _ => None,
        };
        let Some(free) = free else { return true };
        let kept = rose_then(&free, x.test.during)
            && match x.c.kind {
                CulpritKind::Host => judge.changed(&free, rng),
                _ => judge.changed_as_is(&free, rng),
            }
            .is_some();
        tracing::debug!(
            culprit = %x.c.name,
            free_calls = free.calls(),
            calls = x.c.series.calls(),
            free_means_ms = ?free.window_means_ms(),
            kept,
            "held by stuck calls?"
        );
        kept
    });
}

/// Whether the calls of `free` in `windows` (first, last: when the change
/// its candidate was named for added its time) were slower than its
/// others, by more than [`STANDS_OUT`] standard errors of the difference
/// (as far as a window must stand out to count towards a change's
/// effect). The change must show in the free calls where it showed in all
/// of them: free calls that were slow early in the run (a warm-up) and
/// none while the change lasted say it was all waiting. Too few free calls
/// then ([`FLOOR_MIN_CALLS`]) show nothing: every one was held. With no
/// other calls, or no such windows, there is nothing to set them against,
/// and this does not judge.
fn rose_then(free: &Series, windows: Option<(usize, usize)>) -> bool {
    let Some((a, b)) = windows else { return true };
    let (mut then, mut other) = (Moments::default(), Moments::default());
    for block in 0..free.n.len() {
        match (a..=b).contains(&(block / BLOCKS_PER_WINDOW)) {
            true => then.add(free, block),
            false => other.add(free, block),
        }
    }
    if then.calls < f64::from(FLOOR_MIN_CALLS) {
        return false;
    }
    if other.calls <= 0.0 {
        return true;
    }
    let se = (then.var() / then.calls + other.var() / other.calls).sqrt();
    then.mean() - other.mean() > STANDS_OUT * se
}

/// Service `s`'s own work on the requests it served while none of its
/// calls were stuck; `None` where none ever were.
fn service_while_free(inp: &Inputs<'_>, t: &Timeline, wait: &[i64], s: u16) -> Option<Series> {
    let stuck = Stuck::of(inp.edges, t, |c| c == s);
    let keep = |sr, ss| !stuck.during(sr, ss);
    (!stuck.spans.is_empty()).then(|| candidates::own_work_where(inp, t, wait, s, keep))
}

/// Host `h`'s residual on its calls made or served while none of the
/// calls of the services it serves were stuck, each on the host's own
/// clock (from a request's arrival at its server, from a call's sending at
/// its client); `None` where none ever were.
fn host_while_free(inp: &Inputs<'_>, t: &Timeline, h: u16) -> Option<Series> {
    let serves: HashSet<u16> = (inp.edges.iter())
        .filter(|e| e.server_host == h)
        .map(|e| e.callee)
        .collect();
    let stuck = Stuck::of(inp.edges, t, |s| serves.contains(&s));
    let free = |e: &Edge| match (e.server_host == h, e.client_host == h) {
        (true, _) => !stuck.during(e.sr, e.ss),
        (false, true) => !stuck.during(e.cs, e.cr),
        (false, false) => false,
    };
    (!stuck.spans.is_empty()).then(|| candidates::residuals(inp, t, |_, e| free(e)))
}

/// How long a class's calls (start, time taken) usually take: the lower
/// quartile of its windows' medians, each window with at least
/// [`FLOOR_MIN_CALLS`] calls, as the change test sets its floor. A fault
/// that slows most of a class's calls for half the run (a throttled link
/// timing out three in four) moves the median of them all to the
/// fault's own times, and ten times that is past every timeout: then no
/// call is ever stuck. Its quiet windows still hold its usual time. With
/// no such window, the median of all of them.
fn usual(t: &Timeline, calls: &[(i64, i64)]) -> i64 {
    let mut windows: Vec<Vec<f64>> = vec![Vec::new(); t.windows];
    for &(cs, took) in calls {
        windows[t.window_of_block(t.block(cs))].push(took as f64);
    }
    let mut medians: Vec<f64> = (windows.iter_mut())
        .filter(|w| w.len() >= FLOOR_MIN_CALLS as usize)
        .map(|w| median(w))
        .collect();
    if medians.is_empty() {
        return median(&mut calls.iter().map(|c| c.1 as f64).collect::<Vec<f64>>()) as i64;
    }
    floor_of(&mut medians) as i64
}

/// When a service's calls were stuck, on its own clock.
struct Stuck {
    /// (from, until), by `from`.
    spans: Vec<(i64, i64)>,
    /// The latest `until` among `spans[..=i]`.
    reach: Vec<i64>,
}

impl Stuck {
    /// The calls the services `of` takes made, each stuck from its class's
    /// usual time ([`usual`]) times [`STUCK_OVER_USUAL`] after it began
    /// until it ended. A class is the callee; a callee that answered none
    /// of them is stuck from the call's start; a call of no known callee
    /// is of [`Class::Unknown`].
    fn of(edges: &[Edge], t: &Timeline, of: impl Fn(u16) -> bool) -> Stuck {
        let mut classes: HashMap<Class, Vec<(i64, i64)>> = HashMap::new();
        let mut calls: Vec<(Class, i64, i64)> = Vec::new();
        for e in edges.iter().filter(|e| of(e.caller)) {
            let class = Class::Service(e.callee);
            classes.entry(class).or_default().push((e.cs, e.total()));
            calls.push((class, e.cs, e.cr));
        }
        for u in (edges.iter().filter(|e| of(e.callee))).flat_map(|e| &e.unjoined) {
            let class = match u.callee {
                Callee::Silent { service, .. } => Class::Service(service),
                Callee::Dependency(d) => {
                    let class = Class::Dependency(d);
                    classes.entry(class).or_default().push((u.cs, u.cr - u.cs));
                    class
                }
                Callee::Unknown => Class::Unknown,
            };
            calls.push((class, u.cs, u.cr));
        }
        let mut usual: HashMap<Class, i64> = (classes.into_iter())
            .map(|(class, v)| (class, usual(t, &v)))
            .collect();
        if let Some(&slowest) = usual.values().max() {
            usual.insert(Class::Unknown, slowest);
        }
        let mut spans: Vec<(i64, i64)> = (calls.into_iter())
            .filter_map(|(class, cs, cr)| match (class, usual.get(&class)) {
                (Class::Unknown, None) => None,
                (_, usual) => Some((cs + STUCK_OVER_USUAL * usual.copied().unwrap_or(0), cr)),
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
    fn a_call_is_stuck_from_ten_times_its_classs_usual_time_until_it_ends() {
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
        let t = Timeline::new(0, 5000 * ms, 100);
        let stuck = Stuck::of(&edges, &t, |s| s == 0);
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
            !Stuck::of(&edges, &t, |s| s == 1).during(0, 5000 * ms),
            "service 1 made no call"
        );
    }

    #[test]
    fn a_call_whose_answer_was_rejected_is_judged_against_the_slowest_class() {
        // Service 0 calls service 1 (5 ms) and a database (50 ms); one call
        // under its request at 1000 ms has no callee the spans say (its
        // server span outlasted it: a timeout).
        let ms = 1_000_000;
        let mut request = Edge::call(2, 0, 0, 5000 * ms);
        for i in 0..10 {
            request.unjoined.push(Unjoined {
                cs: i * 100 * ms,
                cr: (i * 100 + 50) * ms,
                callee: Callee::Dependency(0),
            });
        }
        request.unjoined.push(Unjoined {
            cs: 1000 * ms,
            cr: 4000 * ms,
            callee: Callee::Unknown,
        });
        let mut edges: Vec<Edge> = (0..10)
            .map(|i| Edge::call(0, 1, i * 10 * ms, (i * 10 + 5) * ms))
            .collect();
        edges.push(request);
        let t = Timeline::new(0, 5000 * ms, 100);
        let stuck = Stuck::of(&edges, &t, |s| s == 0);
        assert_eq!(stuck.spans, [(1500 * ms, 4000 * ms)]);
        // With no known class there is nothing to judge it against.
        let alone = Edge::call(2, 0, 0, 5000 * ms);
        let mut alone = vec![alone];
        alone[0].unjoined.push(Unjoined {
            cs: 1000 * ms,
            cr: 4000 * ms,
            callee: Callee::Unknown,
        });
        assert!(Stuck::of(&alone, &t, |s| s == 0).spans.is_empty());
    }

    #[test]
    fn calls_a_fault_times_out_for_half_the_run_are_stuck() {
        // Service 0 calls service 1 every 10 ms: in 20 ms for the first
        // 6 s, then three in four time out at 3 s (the median of all the
        // calls is 3 s, and ten times that is past every one of them).
        let ms = 1_000_000;
        let edges: Vec<Edge> = (0..1200)
            .map(|i| {
                let cs = i * 10 * ms;
                let took = if cs >= 6000 * ms && i % 4 != 0 {
                    3000
                } else {
                    20
                };
                Edge::call(0, 1, cs, cs + took * ms)
            })
            .collect();
        let t = Timeline::new(0, 12_000 * ms, 1200);
        let stuck = Stuck::of(&edges, &t, |s| s == 0);
        assert!(!stuck.during(0, 6000 * ms), "the quick calls are not stuck");
        assert!(stuck.during(6300 * ms, 6400 * ms));
        // Each timed-out call is stuck from 200 ms (ten of the 20 ms its
        // class usually takes) until its timeout.
        assert_eq!(stuck.spans[0], (6210 * ms, 9010 * ms));
    }

    #[test]
    fn a_host_is_judged_by_its_calls_while_its_services_calls_were_not_stuck() {
        use crate::attribution::Attribution;
        use crate::path::LinkIndex;
        use intpath_core::topo::Topology;
        // Service 1 on host 1 calls service 2 (host 2) for 1 ms, forty
        // times, and once from 1000 to 4000 ms. Service 0 (host 0) calls
        // it every 50 ms: 0.2 ms on the way, but 50 ms while the long call
        // held its pool (requests waiting to be taken).
        let ms = 1_000_000;
        let mut edges: Vec<Edge> = (0..40)
            .map(|i| {
                let mut e = Edge::call(1, 2, i * 100 * ms, (i * 100 + 1) * ms);
                (e.client_host, e.server_host) = (1, 2);
                e
            })
            .collect();
        let mut long = Edge::call(1, 2, 1000 * ms, 4000 * ms);
        (long.client_host, long.server_host) = (1, 2);
        edges.push(long);
        let held = |cs: i64| (1010 * ms..4000 * ms).contains(&cs);
        for k in 0..100 {
            let cs = k * 50 * ms;
            let half = if held(cs) { 25 * ms } else { ms / 10 };
            let mut e = Edge::call(0, 1, cs, cs + 2 * half + ms);
            (e.sr, e.ss) = (cs + half, cs + half + ms);
            edges.push(e);
        }
        let topo = Topology::load("leafspine:spines=1,leaves=2,hosts=2").unwrap();
        let index = LinkIndex::new(&topo);
        let attr = vec![Attribution::default(); edges.len()];
        let inp = Inputs::of_calls(&edges, &attr, &index);
        let t = Timeline::new(0, 5000 * ms, 100);
        let free = host_while_free(&inp, &t, 1).unwrap();
        // What host 1 sent or served outside the long call's hold: its 11
        // quick calls before it, and 41 of the 100 calls into it (those
        // from 1050 to 3950 ms waited); none of the slow ones.
        assert_eq!(free.calls(), 11 + 41);
        let worst = free.values.iter().map(|&(_, v)| v).fold(0.0, f64::max);
        assert!(worst <= 0.2 * ms as f64, "{worst}");
        // Host 0 serves nothing: nothing to judge it by.
        assert!(host_while_free(&inp, &t, 0).is_none());
    }

    #[test]
    fn a_held_services_change_must_show_in_its_free_calls_when_it_was_named_for() {
        // Six windows; the change it was named for was in windows 3 to 5.
        let t = Timeline {
            start: 0,
            block_ns: 1,
            windows: 6,
        };
        let series = |late_ms: Option<f64>| {
            let mut s = Series::new(&t);
            for b in 0..3 * BLOCKS_PER_WINDOW {
                s.add(b, 10e6 + (b % 3) as f64 * 1e5);
            }
            for b in (3 * BLOCKS_PER_WINDOW..6 * BLOCKS_PER_WINDOW).step_by(2) {
                if let Some(ms) = late_ms {
                    s.add(b, ms * 1e6 + (b % 3) as f64 * 1e5);
                }
            }
            s
        };
        let then = Some((3, 5));
        assert!(rose_then(&series(Some(20.0)), then), "slower then");
        assert!(
            !rose_then(&series(Some(7.0)), then),
            "faster then: a warm-up before"
        );
        assert!(
            !rose_then(&series(None), then),
            "no call free then: all held"
        );
        assert!(rose_then(&series(None), None), "no moment to judge by");
        assert!(
            rose_then(&series(Some(20.0)), Some((0, 5))),
            "nothing to set against"
        );
    }
}
