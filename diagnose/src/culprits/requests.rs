//! The run's requests as its calls show them: what the change tests' time
//! line spans, the effects are shared over, and every "seconds after the
//! first request" counts from.

use crate::rpc::{Edge, Entry};

/// The run's requests: how many, when, how long on average.
pub(crate) struct Requests {
    pub count: usize,
    /// When the first and the last request began.
    pub first: i64,
    pub last: i64,
    pub mean_ms: f64,
}

impl Requests {
    /// A request is the span of its calls; one that made none (a
    /// monolith's, answered with its own database queries) is its entry
    /// server span.
    pub(crate) fn of(edges: &[Edge], entries: &[Entry]) -> Option<Self> {
        let traces = (edges.iter().map(|e| e.trace))
            .chain(entries.iter().map(|e| e.trace))
            .max()? as usize
            + 1;
        let mut span = vec![(i64::MAX, i64::MIN); traces];
        for e in edges {
            let s = &mut span[e.trace as usize];
            *s = (s.0.min(e.cs), s.1.max(e.cr));
        }
        let called = span.iter().map(|s| s.0 <= s.1).collect::<Vec<_>>();
        for e in entries.iter().filter(|e| !called[e.trace as usize]) {
            let s = &mut span[e.trace as usize];
            *s = (s.0.min(e.sr), s.1.max(e.ss));
        }
        let seen: Vec<(i64, i64)> = span.into_iter().filter(|s| s.0 <= s.1).collect();
        let mean_ms =
            seen.iter().map(|s| (s.1 - s.0) as f64).sum::<f64>() / seen.len() as f64 / 1e6;
        Some(Requests {
            count: seen.len(),
            first: seen.iter().map(|s| s.0).min()?,
            last: seen.iter().map(|s| s.0).max()?,
            mean_ms,
        })
    }
}
