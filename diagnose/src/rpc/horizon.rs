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
//! long its callers went on calling it: the capture cuts every callee
//! within one export period, so one whose calls went unanswered far longer
//! past its last span than any other callee's did (and longer than its
//! calls take) fell silent on its own.

use super::late::Leads;
use crate::spans::Span;
use std::collections::HashMap;

/// How much longer than every other callee's, and than its own calls
/// take, a callee's calls must have gone unanswered past its last span to
/// be its silence rather than the capture's end. Exporters cut by the
/// capture fall silent at moments spread evenly over one export period:
/// with four other callees, one outlasts three times the longest of them
/// once in 400 captures; with one other, once in 6.
const OUTLASTS: i64 = 3;

/// Per callee: its last span's start and whether calls past it are the
/// capture's end.
pub(super) struct Horizons<'a> {
    last: HashMap<&'a str, i64>,
    cut: HashMap<&'a str, bool>,
}

impl<'a> Horizons<'a> {
    /// `answered`: each answered call's callee and client-side duration;
    /// `unanswered`: each call to a traced callee without a server span,
    /// with that callee.
    pub fn of(
        spans: &'a [Span],
        answered: impl Iterator<Item = (&'a str, i64)>,
        unanswered: &[(&'a Span, &'a str)],
        leads: &Leads<'_>,
    ) -> Self {
        let mut last: HashMap<&str, i64> = HashMap::new();
        for s in spans {
            let t = last.entry(s.service.as_str()).or_insert(i64::MIN);
            *t = (*t).max(s.start_ns);
        }
        let mut took: HashMap<&str, Vec<i64>> = HashMap::new();
        for (callee, total) in answered {
            took.entry(callee).or_default().push(total);
        }
        // How long past its last span each callee's calls went unanswered,
        // on the callee's clock.
        let mut past: HashMap<&str, i64> = HashMap::new();
        for &(c, callee) in unanswered {
            let after = c.start_ns + leads.between(&c.service, callee) - last[callee];
            let p = past.entry(callee).or_insert(0);
            *p = (*p).max(after);
        }
        let cut = (past.iter())
            .map(|(&callee, &p)| {
                let others = (past.iter())
                    .filter(|(&q, _)| q != callee)
                    .map(|(_, &q)| q)
                    .max()
                    .unwrap_or(0);
                let answer = took.get_mut(callee).map_or(0, |v| longest_answer(v));
                (callee, p <= OUTLASTS * others.max(answer))
            })
            .collect();
        Horizons { last, cut }
    }

    /// The call `c` to `callee` could have been answered after the
    /// callee's spans in the capture end, and the capture ended there.
    pub fn beyond(&self, c: &Span, callee: &str, leads: &Leads<'_>) -> bool {
        let cut = self.cut.get(callee).copied().unwrap_or(false);
        cut && c.end_ns + leads.between(&c.service, callee) > self.last[callee]
    }
}

/// What an answer can take: the 99th percentile of a callee's answered
/// calls' durations (`v`, not empty). A wait past it was the silence's
/// doing; a call cut short of it by the capture's end says nothing.
pub(crate) fn longest_answer(v: &mut [i64]) -> i64 {
    let k = ((v.len() - 1) as f64 * 0.99).round() as usize;
    *v.select_nth_unstable(k).1
}
