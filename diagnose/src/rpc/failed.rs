//! Calls answered with a failure (their status `ERROR`), by caller and
//! callee, for the report. A failure costs no time of its own, so it is not
//! a culprit's evidence; but a user looking at slow or failing requests
//! wants to know which calls failed, since when, and whether the callee
//! failed of itself or passed on a failure from below.

use super::Edge;
use std::collections::BTreeMap;

/// One caller's calls to one callee, where some failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    /// Indices into [`super::Edges::services`].
    pub caller: u16,
    pub callee: u16,
    /// Calls whose client or server span failed, of `calls` in all.
    pub failed: u64,
    pub calls: u64,
    /// Failed calls whose callee had itself made a call that failed:
    /// failures passed on from below.
    pub passed_on: u64,
    /// The first and last failed call's start, on the caller's clock.
    pub first_ns: i64,
    pub last_ns: i64,
}

/// The caller–callee pairs with failed calls among `edges`, most failures
/// first; `below[i]`: edge `i`'s server made a call that failed.
pub(super) fn classes(edges: &[Edge], below: &[bool]) -> Vec<Failed> {
    let mut by_pair: BTreeMap<(u16, u16), Failed> = BTreeMap::new();
    for (e, &below) in edges.iter().zip(below) {
        let f = by_pair.entry((e.caller, e.callee)).or_insert(Failed {
            caller: e.caller,
            callee: e.callee,
            failed: 0,
            calls: 0,
            passed_on: 0,
            first_ns: i64::MAX,
            last_ns: i64::MIN,
        });
        f.calls += 1;
        if e.failed {
            f.failed += 1;
            f.passed_on += u64::from(below);
            f.first_ns = f.first_ns.min(e.cs);
            f.last_ns = f.last_ns.max(e.cs);
        }
    }
    let mut all: Vec<Failed> = by_pair.into_values().filter(|f| f.failed > 0).collect();
    all.sort_by_key(|f| (std::cmp::Reverse(f.failed), f.caller, f.callee));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(caller: u16, callee: u16, cs: i64, failed: bool) -> Edge {
        Edge {
            failed,
            ..Edge::call(caller, callee, cs, cs + 10)
        }
    }

    #[test]
    fn failures_are_counted_by_pair_with_those_passed_on_from_below() {
        // 0 → 1 twice (one failed, after a failed call of 1's own), 1 → 2
        // three times (two failed, 2 failing of itself), 0 → 3 fine.
        let edges = [
            edge(0, 1, 100, true),
            edge(0, 1, 200, false),
            edge(1, 2, 110, true),
            edge(1, 2, 210, false),
            edge(1, 2, 300, true),
            edge(0, 3, 50, false),
        ];
        let below = [true, false, false, false, false, false];
        let f = classes(&edges, &below);
        let got: Vec<_> = (f.iter())
            .map(|f| (f.caller, f.callee, f.failed, f.calls, f.passed_on))
            .collect();
        assert_eq!(got, vec![(1, 2, 2, 3, 0), (0, 1, 1, 2, 1)]);
        assert_eq!((f[0].first_ns, f[0].last_ns), (110, 300));
    }
}
