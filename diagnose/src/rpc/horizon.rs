//! Where the capture ends for each service. Exporters send spans in
//! batches, each process on its own schedule (OpenTelemetry's batch
//! processor every 5 s by default, Jaeger's and Zipkin's reporters every
//! second), so spans read while the services run, or after they stopped
//! without flushing, end at a different moment for each of them. A call
//! made after its callee's last span may have been answered in a batch the
//! capture does not hold: it says nothing of the callee.
//!
//! A callee that died, or stopped exporting, long before the rest does
//! look the same call by call. What tells it from the capture's end is how
//! long the others went on past their own last spans: the capture cuts
//! every service within about one export period, so a callee whose calls
//! went unanswered far longer past its last span than any other service
//! went on past its own (and longer than its calls take) fell silent on
//! its own. A service went on past its last span where its callers' calls
//! to it did, or where the callees only it calls began work for calls of
//! its that the capture does not hold.

use super::late::Leads;
use crate::spans::Span;
use std::collections::{HashMap, HashSet};

/// How much longer than any other service went on past its last span,
/// and than its own calls take, a callee's calls must have gone unanswered
/// past its last span to be its silence rather than the capture's end.
/// Were exporters cut at moments spread evenly over one export period,
/// with four other services one would outlast three times the longest of
/// them once in 400 captures. They are not: an exporter on a loaded
/// machine sends late. In 36 captures of the Mininet lab read mid-run, the
/// longest went on 3.2 times the next once.
const OUTLASTS: i64 = 5;

/// What the capture holds of the calls, by service name.
pub(super) struct Calls<'a> {
    /// Each answered call: caller, callee and its client-side duration.
    pub answered: Vec<(&'a str, &'a str, i64)>,
    /// Each call to a traced callee without a server span: its client
    /// span's index in the spans, and that callee.
    pub unanswered: Vec<(usize, &'a str)>,
    /// Server spans whose client span the capture does not hold.
    pub orphans: Vec<&'a Span>,
}

/// The unanswered calls (client span indices) that could have been
/// answered after their callee's spans in the capture end, where the
/// capture ended for that callee rather than the callee falling silent.
pub(super) fn past_the_end<'a>(
    spans: &'a [Span],
    calls: &Calls<'a>,
    leads: &Leads<'_>,
) -> HashSet<usize> {
    let mut last: HashMap<&'a str, i64> = HashMap::new();
    for s in spans {
        let t = last.entry(s.service.as_str()).or_insert(i64::MIN);
        *t = (*t).max(s.start_ns);
    }
    // How long each service went on past its last span, on its clock.
    let mut went_on: HashMap<&'a str, i64> = HashMap::new();
    let mut on = |service: &'a str, at: i64| {
        let w = went_on.entry(service).or_insert(0);
        *w = (*w).max(at - last[service]);
    };
    // Its callers called it.
    for &(ci, callee) in &calls.unanswered {
        let c = &spans[ci];
        on(callee, c.start_ns + leads.between(&c.service, callee));
    }
    // A callee it alone calls began work for it.
    let mut callers: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut took: HashMap<&str, Vec<i64>> = HashMap::new();
    for &(caller, callee, total) in &calls.answered {
        callers.entry(callee).or_default().insert(caller);
        took.entry(callee).or_default().push(total);
    }
    for s in &calls.orphans {
        let only = callers.get(s.service.as_str()).filter(|c| c.len() == 1);
        if let Some(&caller) = only.and_then(|c| c.iter().next()) {
            on(caller, s.start_ns - leads.between(caller, &s.service));
        }
    }
    let callees: HashSet<&str> = calls.unanswered.iter().map(|&(_, s)| s).collect();
    let cut: HashSet<&str> = (callees.into_iter())
        .filter(|&callee| {
            let others = (went_on.iter())
                .filter(|(&q, _)| q != callee)
                .map(|(_, &w)| w)
                .max()
                .unwrap_or(0);
            let answer = took.get_mut(callee).map_or(0, |v| longest_answer(v));
            let cut = went_on[callee] <= OUTLASTS * others.max(answer);
            tracing::debug!(
                callee,
                went_on_ms = went_on[callee] / 1_000_000,
                others_ms = others / 1_000_000,
                answer_ms = answer / 1_000_000,
                cut,
                "unanswered past its last span"
            );
            cut
        })
        .collect();
    (calls.unanswered.iter())
        .filter(|&&(ci, callee)| {
            let c = &spans[ci];
            cut.contains(callee) && c.end_ns + leads.between(&c.service, callee) > last[callee]
        })
        .map(|&(ci, _)| ci)
        .collect()
}

/// What an answer can take: the 99th percentile of a callee's answered
/// calls' durations (`v`, not empty). A wait past it was the silence's
/// doing; a call cut short of it by the capture's end says nothing.
pub(crate) fn longest_answer(v: &mut [i64]) -> i64 {
    let k = ((v.len() - 1) as f64 * 0.99).round() as usize;
    *v.select_nth_unstable(k).1
}
