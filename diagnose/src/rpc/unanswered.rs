//! Calls to a traced callee that no server span answered, counted by
//! caller and callee for the report: nothing else shows a callee that is
//! down, unreachable, or whose exporter is stuck behind the same fault.

use crate::spans::Span;

/// Calls from one service to a traced one that no server span answered,
/// by caller and callee. A callee down, unreachable, or whose own
/// exporter is stuck behind the same fault answers nobody: its callers'
/// waits are all that is left of it, and they are nobody's work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unanswered {
    pub caller: String,
    pub callee: String,
    pub calls: u64,
    /// Made after the callee's last span in the capture, which ended
    /// before their answers would have been exported (see
    /// [`super::horizon`]): not evidence against the callee.
    pub after_last_span: bool,
    /// The first and the last such call's start, on the caller's clock.
    pub first_ns: i64,
    pub last_ns: i64,
}

/// Counts `c`, a call in time order, among its caller's unanswered calls
/// to `callee` on the same side of the callee's last span.
pub(super) fn count(all: &mut Vec<Unanswered>, c: &Span, callee: &str, after_last_span: bool) {
    match all.iter_mut().find(|u| {
        u.caller == c.service && u.callee == callee && u.after_last_span == after_last_span
    }) {
        Some(u) => {
            u.calls += 1;
            u.last_ns = c.start_ns;
        }
        None => all.push(Unanswered {
            caller: c.service.clone(),
            callee: callee.to_owned(),
            calls: 1,
            after_last_span,
            first_ns: c.start_ns,
            last_ns: c.start_ns,
        }),
    }
}
