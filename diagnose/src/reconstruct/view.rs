//! Each service's own timeline: its incoming requests (received, answered)
//! and outgoing calls (sent, answered), on the service's clock. For an
//! uninstrumented service the times come from the other end of each RPC,
//! moved across the network by a [`Transfer`] estimate with an interval.

use super::callgraph::Arrival;
use super::executors::{self, Grain};
use super::model::Rpcs;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A moment on the service's clock: point estimate, bounds, and the
/// estimate's standard error (ns; 0 where a span recorded it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ev {
    pub t: i64,
    pub lo: i64,
    pub hi: i64,
    pub sd: i64,
}

impl Ev {
    pub fn exact(t: i64) -> Self {
        Ev {
            t,
            lo: t,
            hi: t,
            sd: 0,
        }
    }
}

/// How far (ns, clock offset plus one-way delay) a message of one RPC moved
/// from the sender's clock to the receiver's: point, bounds, and the
/// point's standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    pub t: f64,
    pub lo: f64,
    pub hi: f64,
    pub sd: f64,
}

/// Estimates of each RPC's request (client → server) and response
/// (server → client) shifts, needed where one side is missing.
pub trait Transfer {
    fn request(&self, rpc: u32) -> Shift;
    fn response(&self, rpc: u32) -> Shift;
}

/// An incoming request at the service.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct In {
    pub rpc: u32,
    /// The service that sent it (`None`: a root request).
    pub caller: Option<u16>,
    pub start: Ev,
    pub end: Ev,
    /// Requests that arrived before this one and were not yet answered
    /// when it arrived: the queue it may have waited behind.
    pub queued: u32,
    /// The process or thread that took it, where the service's spans
    /// show its calls stay there ([`executors`]).
    pub unit: Option<u64>,
    /// At a service that gathers: where it arrived among its request's
    /// visits, where those are known ([`super::gather`]).
    pub arrival: Option<Arrival>,
}

/// An outgoing call from the service.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Out {
    pub rpc: u32,
    pub callee: u16,
    pub req: Ev,
    pub resp: Ev,
    /// The process or thread that sent it, as for [`In::unit`].
    pub unit: Option<u64>,
}

impl Out {
    /// Whether the call may be `x`'s as far as where both ran goes.
    pub fn may_serve(&self, x: &In) -> bool {
        match (self.unit, x.unit) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }
}

/// One service's timeline, incoming sorted by start then end, outgoing by
/// request time, with outgoing indices per callee (in request order).
#[derive(Debug, Clone, Default)]
pub struct View {
    pub service: u16,
    pub ins: Vec<In>,
    pub outs: Vec<Out>,
    pub by_callee: HashMap<u16, Vec<usize>>,
    /// Widest bound of any event (how far a search must look past a point).
    pub slack: i64,
    /// What binds the service's calls to its requests besides timing.
    pub bound_by: Option<Grain>,
}

/// Moves `t` by `-s` (`back`) or `+s`, bounds included.
fn moved(t: i64, s: Shift, back: bool) -> Ev {
    let sign = if back { -1.0 } else { 1.0 };
    let a = t as f64 + sign * s.lo;
    let b = t as f64 + sign * s.hi;
    Ev {
        t: (t as f64 + sign * s.t) as i64,
        lo: a.min(b) as i64,
        hi: a.max(b) as i64,
        sd: s.sd as i64,
    }
}

/// The timelines of every service, indexed by service id.
pub fn views(rpcs: &Rpcs, transfer: &dyn Transfer) -> Vec<View> {
    let mut out: Vec<View> = (0..rpcs.services.len())
        .map(|s| View {
            service: s as u16,
            ..View::default()
        })
        .collect();
    for (i, r) in rpcs.rpcs.iter().enumerate() {
        let i = i as u32;
        let incoming = match (r.server, r.client) {
            (Some(s), _) => Some((Ev::exact(s.start), Ev::exact(s.end))),
            (None, Some(c)) => Some((
                moved(c.start, transfer.request(i), false),
                moved(c.end, transfer.response(i), true),
            )),
            (None, None) => None,
        };
        if let Some((start, end)) = incoming {
            out[r.callee as usize].ins.push(In {
                rpc: i,
                caller: r.caller,
                start,
                end,
                queued: 0,
                unit: None,
                arrival: None,
            });
        }
        let Some(caller) = r.caller else { continue };
        let outgoing = match (r.client, r.server) {
            (Some(c), _) => Some((Ev::exact(c.start), Ev::exact(c.end))),
            (None, Some(s)) => Some((
                moved(s.start, transfer.request(i), true),
                moved(s.end, transfer.response(i), false),
            )),
            (None, None) => None,
        };
        if let Some((req, resp)) = outgoing {
            out[caller as usize].outs.push(Out {
                rpc: i,
                callee: r.callee,
                req,
                resp,
                unit: None,
            });
        }
    }
    for v in &mut out {
        v.ins.sort_by_key(|x| (x.start.t, x.end.t, x.rpc));
        count_queued(&mut v.ins);
        v.outs.sort_by_key(|x| (x.req.t, x.resp.t, x.rpc));
        for (k, o) in v.outs.iter().enumerate() {
            v.by_callee.entry(o.callee).or_default().push(k);
        }
        let width = |e: &Ev| (e.t - e.lo).max(e.hi - e.t);
        v.slack = v
            .ins
            .iter()
            .flat_map(|x| [width(&x.start), width(&x.end)])
            .chain(v.outs.iter().flat_map(|x| [width(&x.req), width(&x.resp)]))
            .max()
            .unwrap_or(0);
        v.bound_by = executors::bind(v, rpcs);
    }
    out
}

/// Sets each request's `queued` from `ins` sorted by start.
fn count_queued(ins: &mut [In]) {
    let mut open: BinaryHeap<Reverse<i64>> = BinaryHeap::new();
    for x in ins {
        while open.peek().is_some_and(|&Reverse(end)| end <= x.start.t) {
            open.pop();
        }
        x.queued = open.len() as u32;
        open.push(Reverse(x.end.t));
    }
}

/// No network in between: for inputs where every RPC has both spans.
pub struct NoTransfer;

impl Transfer for NoTransfer {
    fn request(&self, _: u32) -> Shift {
        Shift {
            t: 0.0,
            lo: 0.0,
            hi: 0.0,
            sd: 0.0,
        }
    }
    fn response(&self, rpc: u32) -> Shift {
        self.request(rpc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_counts_earlier_requests_still_open_at_arrival() {
        let mut ins: Vec<In> = [(0, 10), (5, 20), (12, 30), (15, 40), (40, 41)]
            .into_iter()
            .map(|(a, b)| In {
                rpc: 0,
                caller: None,
                start: Ev::exact(a),
                end: Ev::exact(b),
                queued: 9,
                unit: None,
                arrival: None,
            })
            .collect();
        count_queued(&mut ins);
        let q: Vec<u32> = ins.iter().map(|x| x.queued).collect();
        // At 15, [5,20] and [12,30] are open; at 40, [15,40] has just ended.
        assert_eq!(q, vec![0, 1, 1, 2, 0]);
    }
}
