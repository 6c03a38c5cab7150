//! Which stored spans a round takes: the traces no span arrived for
//! lately, each span once, a trace still receiving spans left to wait.

use intpath_store::spans::SpanArrival;
use std::collections::{HashMap, HashSet};

/// What has been taken: every span stored up to `seen`, except, for each
/// trace in `waiting`, its spans stored after the time it maps to (the
/// trace was still receiving spans).
#[derive(Debug)]
pub(super) struct Tracker {
    seen: i64,
    waiting: HashMap<String, i64>,
}

/// One round's take.
#[derive(Debug)]
pub(super) struct Pick {
    /// The spans to send: (trace, span) ids.
    pub send: HashSet<(String, String)>,
    /// The earliest start among them.
    pub first_start: i64,
    seen: i64,
    waiting: HashMap<String, i64>,
}

impl Tracker {
    pub(super) fn new(now: i64) -> Self {
        Tracker {
            seen: now,
            waiting: HashMap::new(),
        }
    }

    /// The spans stored after this are the ones [`Tracker::pick`] needs.
    pub(super) fn horizon(&self) -> i64 {
        self.waiting.values().fold(self.seen, |a, &b| a.min(b))
    }

    /// Of `arrivals` (every span stored after [`Tracker::horizon`]): the
    /// traces with a span stored since the last round and none after
    /// `cutoff`, and their spans not taken yet.
    pub(super) fn pick(&self, arrivals: &[SpanArrival], cutoff: i64) -> Pick {
        let cutoff = cutoff.max(self.seen);
        let mut touched = HashSet::new();
        let mut busy = HashSet::new();
        for a in arrivals {
            if a.received_ns > cutoff {
                busy.insert(a.trace_id.as_str());
            } else if a.received_ns > self.seen {
                touched.insert(a.trace_id.as_str());
            }
        }
        let mut waiting = self.waiting.clone();
        let mut ready = HashMap::new();
        for t in touched {
            let floor = self.waiting.get(t).copied().unwrap_or(self.seen);
            if busy.contains(t) {
                waiting.insert(t.to_owned(), floor);
            } else {
                waiting.remove(t);
                ready.insert(t, floor);
            }
        }
        let mut send = HashSet::new();
        let mut first_start = i64::MAX;
        for a in arrivals {
            let taken = ready.get(a.trace_id.as_str());
            if taken.is_some_and(|&floor| a.received_ns > floor && a.received_ns <= cutoff) {
                send.insert((a.trace_id.clone(), a.span_id.clone()));
                first_start = first_start.min(a.start_ns);
            }
        }
        Pick {
            send,
            first_start,
            seen: cutoff,
            waiting,
        }
    }

    pub(super) fn commit(&mut self, pick: Pick) {
        self.seen = pick.seen;
        self.waiting = pick.waiting;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(trace: &str, span: &str, received_ns: i64) -> SpanArrival {
        SpanArrival {
            trace_id: trace.into(),
            span_id: span.into(),
            start_ns: received_ns - 5,
            received_ns,
        }
    }

    /// Every span stored after the tracker's horizon, as the store gives
    /// them.
    fn after(all: &[SpanArrival], t: &Tracker) -> Vec<SpanArrival> {
        let h = t.horizon();
        all.iter().filter(|a| a.received_ns > h).cloned().collect()
    }

    fn ids(p: &Pick) -> Vec<String> {
        let mut v: Vec<String> = p.send.iter().map(|(t, s)| format!("{t}/{s}")).collect();
        v.sort();
        v
    }

    #[test]
    fn a_trace_waits_until_quiet_and_each_span_is_taken_once() {
        let mut t = Tracker::new(0);
        let mut all = vec![at("a", "1", 10), at("a", "2", 20), at("b", "1", 15)];
        // Round at cutoff 18: b is quiet, a has a span after the cutoff.
        let p = t.pick(&after(&all, &t), 18);
        assert_eq!(ids(&p), ["b/1"]);
        assert_eq!(p.first_start, 10);
        t.commit(p);
        assert_eq!(t.horizon(), 0, "a's first span is still to send");
        // a's spans keep arriving: still not ready at cutoff 25.
        all.push(at("a", "3", 30));
        let p = t.pick(&after(&all, &t), 25);
        assert!(p.send.is_empty());
        t.commit(p);
        // Quiet now: all three of a's spans, none of b's again.
        let p = t.pick(&after(&all, &t), 40);
        assert_eq!(ids(&p), ["a/1", "a/2", "a/3"]);
        t.commit(p);
        assert_eq!(t.horizon(), 40);
        // A late span of a: only it.
        all.push(at("a", "4", 50));
        let p = t.pick(&after(&all, &t), 60);
        assert_eq!(ids(&p), ["a/4"]);
        t.commit(p);
        let p = t.pick(&after(&all, &t), 70);
        assert!(p.send.is_empty());
    }

    #[test]
    fn spans_stored_before_the_start_are_not_taken() {
        let t = Tracker::new(100);
        let all = [at("a", "1", 90), at("a", "2", 110), at("b", "1", 95)];
        let p = t.pick(&after(&all, &t), 200);
        assert_eq!(ids(&p), ["a/2"]);
    }

    #[test]
    fn a_round_not_committed_is_taken_again() {
        let t = Tracker::new(0);
        let all = [at("a", "1", 10)];
        let first = ids(&t.pick(&after(&all, &t), 20));
        // The diagnosis failed and was not committed: the same again.
        assert_eq!(ids(&t.pick(&after(&all, &t), 30)), first);
    }

    #[test]
    fn a_cutoff_going_back_takes_nothing_twice() {
        let mut t = Tracker::new(0);
        let all = [at("a", "1", 10)];
        let p = t.pick(&after(&all, &t), 20);
        t.commit(p);
        let p = t.pick(&after(&all, &t), 5);
        assert!(p.send.is_empty());
        t.commit(p);
        assert_eq!(t.horizon(), 20);
    }
}
