//! How late a server span is against its client span, each on its own
//! host's clock: a flush, a hang past the caller's timeout, or a call
//! taken up only after the caller gave up. Measured past when the pair's
//! calls usually reach the server, which holds the two clocks' offset, so
//! that clocks far apart pass for none of them.

use super::client_id;
use crate::spans::Span;
use std::collections::HashMap;

/// How much later than its client's a server span may end by finishing
/// its own bookkeeping: Node's HTTP server spans end 0.3 ms after their
/// clients' at the median, 0.8 ms nine times in ten.
pub(super) const FLUSH_NS: i64 = 1_000_000;

/// How much later than its client's a server span ends once its caller has
/// given up on it (a timeout) while it worked on. Flushes and closing
/// sockets end server spans up to 17 ms late (uvicorn; Node 7.5 ms): past
/// this, the server was still at work, not finishing its bookkeeping.
pub(super) const GAVE_UP_NS: i64 = 100_000_000;

/// Per (caller, callee) service: the median time from a client span's
/// start to its server span's start, each on its own host's clock: the
/// two clocks' offset and the usual way there.
pub(super) struct Leads<'a>(HashMap<(&'a str, &'a str), i64>);

impl<'a> Leads<'a> {
    pub fn of(
        spans: &'a [Span],
        servers: &[usize],
        clients: &HashMap<(&str, &str), usize>,
    ) -> Self {
        let mut leads: HashMap<(&str, &str), Vec<i64>> = HashMap::new();
        for s in servers.iter().map(|&si| &spans[si]) {
            let client = client_id(s).and_then(|id| clients.get(&(s.trace_id.as_str(), id)));
            if let Some(c) = client.map(|&ci| &spans[ci]) {
                let pair = (c.service.as_str(), s.service.as_str());
                leads.entry(pair).or_default().push(s.start_ns - c.start_ns);
            }
        }
        let medians = (leads.into_iter()).map(|(pair, mut v)| {
            let mid = v.len() / 2;
            (pair, *v.select_nth_unstable(mid).1)
        });
        Leads(medians.collect())
    }

    fn usual(&self, c: &Span, s: &Span) -> i64 {
        self.between(&c.service, &s.service)
    }

    /// The usual lead from `caller`'s calls to `callee`'s server spans (0
    /// where none was answered).
    pub fn between(&self, caller: &str, callee: &str) -> i64 {
        self.0.get(&(caller, callee)).copied().unwrap_or(0)
    }

    /// The server took the call up only after its caller had given up (a
    /// process stopped or stalled, its accept queue stuck).
    pub fn taken_up_late(&self, c: &Span, s: &Span) -> bool {
        s.start_ns - c.end_ns - self.usual(c, s) >= GAVE_UP_NS
    }

    /// The server was still at work when its caller gave up (a timeout):
    /// its span ends that much after the client's.
    pub fn ended_after_give_up(&self, c: &Span, s: &Span) -> bool {
        s.end_ns - c.end_ns - self.usual(c, s) >= GAVE_UP_NS
    }
}

/// A server span that outlasts its client's by no more than a flush.
pub(super) fn flushed(c: &Span, s: &Span) -> bool {
    s.end_ns - c.end_ns <= FLUSH_NS
}
