//! Which process and thread ran each span, where the spans say
//! (`service.instance.id`, `thread.id`), and whether a service's spans show
//! that a call belongs to a request its own process or thread took.
//!
//! vPath and DeepFlow map a thread's calls to the last request the thread
//! picked up; that fails wherever a service hands requests between threads
//! (gRPC and Thrift pools, event loops), which TraceWeaver's timing
//! analysis was built for. Here the thread is only a constraint on
//! timing's candidates, and only for a service whose own spans bear it
//! out: nearly every call it made left while a request taken by the same
//! thread was open (calls from threads that take no requests, a client
//! pool's, are left free), and either the thread is inside one request at
//! a time (a blocking thread cannot send another request's calls: vPath's
//! assumption, checked rather than assumed) or a thread drawn at random
//! would have had none open far more often (an event loop). A service
//! that hands work over fails that test and keeps timing alone, as does an
//! event loop pool so busy that every loop always has a request open: its
//! spans cannot show either way. Replicas, and single-threaded worker
//! processes, are told apart the same way, by process.

use super::model::Rpcs;
use super::view::View;
use crate::spans::Span;
use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

/// Largest share of a service's calls that may leave while no request of
/// their own process (or thread) is open.
const MISSED: f64 = 0.01;
/// Calls a key that says nothing would miss by chance, at least: fewer,
/// and the spans could not have shown it says nothing (one busy event
/// loop, or too few calls).
const CHANCE_MISSES: f64 = 10.0;
/// How many times fewer calls than chance the key must miss.
const BETTER: f64 = 5.0;
/// Fewest calls with a key before a thread's one-request-at-a-time shape
/// is trusted alone.
const MIN_CALLS: f64 = 30.0;

/// Where one span ran, as hashed keys: its process, and its thread
/// within that process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Executor {
    pub process: Option<u64>,
    pub thread: Option<u64>,
}

impl Executor {
    pub fn of(span: &Span) -> Executor {
        let e = &span.endpoint;
        Executor {
            process: e.instance.as_ref().map(key),
            // A thread id is unique within its process only.
            thread: e.thread.as_ref().map(|t| key((&e.instance, t))),
        }
    }
}

fn key(parts: impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

/// How finely a key tells a service's executors apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grain {
    Thread,
    Process,
}

impl std::fmt::Display for Grain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Grain::Thread => "thread",
            Grain::Process => "process",
        })
    }
}

impl Grain {
    fn key(self, e: Executor) -> Option<u64> {
        match self {
            Grain::Thread => e.thread,
            Grain::Process => e.process,
        }
    }
}

/// Sets `unit` on the view's requests and calls to the finest key the
/// service's spans bear out (`None` everywhere when none does) and returns
/// its grain. A request has an executor where its server span was
/// recorded, a call where its client span was.
pub fn bind(view: &mut View, rpcs: &Rpcs) -> Option<Grain> {
    let at = |side: Option<super::model::Side>| side.map_or_else(Executor::default, |s| s.executor);
    let of_in: Vec<Executor> = (view.ins.iter())
        .map(|x| at(rpcs.rpcs[x.rpc as usize].server))
        .collect();
    let of_out: Vec<Executor> = (view.outs.iter())
        .map(|o| at(rpcs.rpcs[o.rpc as usize].client))
        .collect();
    let (of_in, of_out) = (&of_in[..], &of_out[..]);
    let grain = [Grain::Thread, Grain::Process]
        .into_iter()
        .find(|&g| holds(view, of_in, of_out, g));
    for (x, e) in view.ins.iter_mut().zip(of_in) {
        x.unit = grain.and_then(|g| g.key(*e));
    }
    // A call sent by a thread that never took a request (a client pool's)
    // was handed over: it may be any request's.
    let takers: HashSet<u64> = (of_in.iter())
        .filter_map(|e| grain.and_then(|g| g.key(*e)))
        .collect();
    for (o, e) in view.outs.iter_mut().zip(of_out) {
        o.unit = grain.and_then(|g| g.key(*e)).filter(|k| takers.contains(k));
    }
    grain
}

/// Requests taken by one key, sorted by start, with the latest end so
/// far at each: whether any is open at `t` is one binary search.
struct Open {
    starts: Vec<i64>,
    max_end: Vec<i64>,
    /// Requests that began before an earlier one had ended.
    overlaps: usize,
}

impl Open {
    fn of(mut spans: Vec<(i64, i64)>) -> Open {
        spans.sort_unstable();
        let (mut end, mut overlaps) = (i64::MIN, 0);
        let max_end = (spans.iter())
            .map(|s| {
                overlaps += usize::from(s.0 < end);
                end = end.max(s.1);
                end
            })
            .collect();
        let starts = spans.iter().map(|s| s.0).collect();
        Open {
            starts,
            max_end,
            overlaps,
        }
    }

    fn at(&self, t: i64) -> bool {
        let n = self.starts.partition_point(|&s| s <= t);
        n > 0 && self.max_end[n - 1] >= t
    }
}

/// Whether `grain`'s keys bind calls to requests at this service: all but
/// [`MISSED`] of the calls sent by a key that takes requests left while a
/// request with their key was open, and either the keys take one request
/// at a time (all but [`MISSED`] of the requests began after the one
/// before ended; at least [`MIN_CALLS`] calls), or a key drawn at random (weighted by how many of
/// the keys had one open at that moment) would have missed [`BETTER`]
/// times as many calls, and at least [`CHANCE_MISSES`].
fn holds(view: &View, of_in: &[Executor], of_out: &[Executor], grain: Grain) -> bool {
    let mut taken: HashMap<u64, Vec<(i64, i64)>> = HashMap::new();
    for (x, e) in view.ins.iter().zip(of_in) {
        if let Some(k) = grain.key(*e) {
            taken.entry(k).or_default().push((x.start.t, x.end.t));
        }
    }
    if taken.len() < 2 {
        return false;
    }
    let open: HashMap<u64, Open> = (taken.into_iter())
        .map(|(k, spans)| (k, Open::of(spans)))
        .collect();
    let requests: usize = open.values().map(|w| w.starts.len()).sum();
    let overlaps: usize = open.values().map(|w| w.overlaps).sum();
    let one_at_a_time = overlaps as f64 <= MISSED * requests as f64;
    let sent: Vec<(i64, &Open)> = (view.outs.iter().zip(of_out))
        .filter_map(|(o, e)| Some((o.req.t, open.get(&grain.key(*e)?)?)))
        .collect();
    let calls = sent.len() as f64;
    let missed = sent.iter().filter(|(t, own)| !own.at(*t)).count() as f64;
    if missed > MISSED * calls {
        return false;
    }
    if one_at_a_time && calls >= MIN_CALLS {
        return true;
    }
    let busy = Busy::of(&open);
    let by_chance: f64 = (sent.iter())
        .map(|(t, _)| 1.0 - busy.at(*t) as f64 / open.len() as f64)
        .sum();
    by_chance >= CHANCE_MISSES && missed * BETTER <= by_chance
}

/// When each key was inside some request of its own (the union of its
/// requests), as sorted starts and ends over all keys: how many keys were
/// busy at a moment is two binary searches.
struct Busy {
    starts: Vec<i64>,
    ends: Vec<i64>,
}

impl Busy {
    fn of(open: &HashMap<u64, Open>) -> Busy {
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        for w in open.values() {
            // A stretch of the union begins at each request that starts
            // after every earlier one ended, and ends where the latest end
            // before the next such request is.
            for (i, &s) in w.starts.iter().enumerate() {
                if i == 0 || s > w.max_end[i - 1] {
                    starts.push(s);
                    ends.extend(i.checked_sub(1).map(|p| w.max_end[p]));
                }
            }
            ends.extend(w.max_end.last());
        }
        starts.sort_unstable();
        ends.sort_unstable();
        Busy { starts, ends }
    }

    /// Keys inside a request at `t` (ends count as inside, as in
    /// [`Open::at`]).
    fn at(&self, t: i64) -> usize {
        self.starts.partition_point(|&s| s <= t) - self.ends.partition_point(|&e| e < t)
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{Rpc, Rpcs, Side};
    use super::super::view::{views, NoTransfer};
    use super::*;

    fn api_and_db() -> Rpcs {
        Rpcs {
            services: vec!["api".into(), "db".into()],
            ..Rpcs::default()
        }
    }

    /// A request into `api` recorded by `server`, and the call to `db` it
    /// made, recorded by `client`.
    fn request_and_call(rpcs: &mut Rpcs, server: Side, client: Side) {
        let rpc = |caller, callee, client, server| Rpc {
            caller,
            callee,
            client,
            server,
            truth: None,
            hidden: None,
        };
        rpcs.rpcs.push(rpc(None, 0, None, Some(server)));
        rpcs.rpcs.push(rpc(Some(0), 1, Some(client), None));
    }

    fn at(start: i64, end: i64, process: u64, thread: Option<u64>) -> Side {
        Side {
            span: 0,
            start,
            end,
            executor: Executor {
                process: Some(process),
                thread: thread.map(|t| process * 100 + t),
            },
        }
    }

    /// 200 requests into service 0, one every 100 ns lasting 150 on
    /// worker `i % 4` of process `i / 10 % 2` (the processes take turns),
    /// each making one call 50 ns in from the worker `call_on(i)` names.
    fn bound_by(call_on: impl Fn(u64) -> Option<u64>) -> Option<Grain> {
        let mut rpcs = api_and_db();
        for i in 0..200u64 {
            let t = 100 * i as i64;
            let process = i / 10 % 2;
            request_and_call(
                &mut rpcs,
                at(t, t + 150, process, Some(i % 4)),
                at(t + 50, t + 60, process, call_on(i)),
            );
        }
        views(&rpcs, &NoTransfer)[0].bound_by
    }

    #[test]
    fn calls_sent_by_the_thread_that_took_the_request_bind_to_it() {
        assert_eq!(bound_by(|i| Some(i % 4)), Some(Grain::Thread));
    }

    #[test]
    fn calls_handed_to_another_thread_fall_back_to_the_process() {
        // The next worker sends each call, as a pool behind a gRPC
        // server's threads would: its own requests are rarely open then.
        assert_eq!(bound_by(|i| Some((i + 1) % 4)), Some(Grain::Process));
        // No thread recorded on the calls at all: the process still holds.
        assert_eq!(bound_by(|_| None), Some(Grain::Process));
    }

    #[test]
    fn one_event_loop_or_unmarked_spans_bind_nothing() {
        let mut rpcs = api_and_db();
        for i in 0..200i64 {
            let one = at(100 * i, 100 * i + 150, 0, Some(0));
            let call = Side {
                start: 100 * i + 50,
                end: 100 * i + 60,
                ..one
            };
            request_and_call(&mut rpcs, one, call);
        }
        assert_eq!(views(&rpcs, &NoTransfer)[0].bound_by, None);
        rpcs.forget_executors();
        assert_eq!(views(&rpcs, &NoTransfer)[0].bound_by, None);
    }

    /// Four blocking threads, each always inside a request (a saturated
    /// servlet pool): every thread is busy at every call, so chance says
    /// nothing, but a thread inside one request at a time sends that one's
    /// calls. Half the calls leave from a client pool whose threads take
    /// no requests (parallel calls, as the shop's): those may be anyone's.
    #[test]
    fn a_saturated_blocking_pool_binds_by_thread_and_leaves_its_client_pools_calls_free() {
        let mut rpcs = api_and_db();
        for i in 0..200u64 {
            let t = 100 * (i / 4) as i64;
            let sender = if i % 2 == 0 { i % 4 } else { 10 + i % 3 };
            request_and_call(
                &mut rpcs,
                at(t, t + 100, 0, Some(i % 4)),
                at(t + 20 + (i % 4) as i64, t + 60, 0, Some(sender)),
            );
        }
        let view = &views(&rpcs, &NoTransfer)[0];
        assert_eq!(view.bound_by, Some(Grain::Thread));
        for o in &view.outs {
            let i = u64::from(o.rpc / 2);
            assert_eq!(o.unit.is_some(), i % 2 == 0, "call {i}");
        }
    }

    #[test]
    fn busy_keys_are_counted_from_each_keys_union_of_requests() {
        // Key k's requests: overlapping, nested and apart, ends inclusive.
        let requests: [&[(i64, i64)]; 3] =
            [&[(0, 10), (5, 20), (30, 40)], &[(12, 14), (13, 13)], &[]];
        let open: HashMap<u64, Open> = (requests.iter().enumerate())
            .filter(|(_, r)| !r.is_empty())
            .map(|(k, r)| (k as u64, Open::of(r.to_vec())))
            .collect();
        let busy = Busy::of(&open);
        for t in -1..45 {
            let by_key = open.values().filter(|w| w.at(t)).count();
            assert_eq!(busy.at(t), by_key, "at {t}");
        }
    }
}
