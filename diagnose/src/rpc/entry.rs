//! Where a service began work that no traced client waited on (a
//! request come in from outside the traces, a message taken off a queue),
//! and how much of that time it spent on its own.

use crate::spans::Span;
use std::collections::HashMap;

/// A server span no traced client called (a browser, an untraced load
/// balancer or gateway, a client whose span is missing), or a consumer
/// span (a message's handling). It is no edge, having no client side to
/// split the time with, but its service's own work is a culprit as any
/// callee's is: without it a slow entry service, or a slow consumer, was
/// nobody's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Index into [`Edges::services`].
    pub service: u16,
    /// Index into [`Edges::traces`].
    pub trace: u32,
    /// The server span, on its host's clock.
    pub sr: i64,
    pub ss: i64,
    /// How long it waited on its own calls (their union within it).
    pub wait: i64,
}

impl Entry {
    /// Its own work: its time less its wait on its calls.
    pub fn own(&self) -> i64 {
        (self.ss - self.sr - self.wait).max(0)
    }
}

/// The entries of the spans `first`, each with the union of the calls
/// made under it.
pub(super) fn entries<'a>(
    spans: &'a [Span],
    first: Vec<usize>,
    clients: &HashMap<(&str, &str), usize>,
    above: &HashMap<usize, &str>,
    service_ids: &mut HashMap<&'a str, u16>,
    trace_ids: &mut HashMap<&'a str, u32>,
) -> Vec<Entry> {
    let roots: HashMap<(&str, &str), usize> = (first.into_iter())
        .map(|si| {
            (
                (spans[si].trace_id.as_str(), spans[si].span_id.as_str()),
                si,
            )
        })
        .collect();
    let mut calls: HashMap<usize, Vec<(i64, i64)>> = HashMap::new();
    for &ci in clients.values() {
        let c = &spans[ci];
        let root = above
            .get(&ci)
            .and_then(|&id| roots.get(&(&*c.trace_id, id)));
        if let Some(&si) = root {
            calls.entry(si).or_default().push((c.start_ns, c.end_ns));
        }
    }
    // In the input's order, so that a service first seen here gets the
    // same index every time.
    let mut order: Vec<usize> = roots.into_values().collect();
    order.sort_unstable();
    let mut out: Vec<Entry> = Vec::with_capacity(order.len());
    for si in order {
        let s = &spans[si];
        let service = match service_ids.get(s.service.as_str()) {
            Some(&id) => id,
            None => {
                let Ok(id) = u16::try_from(service_ids.len()) else {
                    continue;
                };
                service_ids.insert(s.service.as_str(), id);
                id
            }
        };
        let Ok(n) = u32::try_from(trace_ids.len()) else {
            continue;
        };
        let trace = *trace_ids.entry(s.trace_id.as_str()).or_insert(n);
        let mut waits = calls.remove(&si).unwrap_or_default();
        let wait = union_within(&mut waits, s.start_ns, s.end_ns);
        out.push(Entry {
            service,
            trace,
            sr: s.start_ns,
            ss: s.end_ns,
            wait,
        });
    }
    out
}

/// The length of the union of `intervals`, each clipped to `[from, to]`.
pub(crate) fn union_within(intervals: &mut [(i64, i64)], from: i64, to: i64) -> i64 {
    intervals.sort_unstable();
    let (mut sum, mut end) = (0, i64::MIN);
    for &(a, b) in intervals.iter() {
        let (a, b) = (a.max(from).max(end), b.min(to));
        if b > a {
            sum += b - a;
            end = b;
        }
    }
    sum
}
