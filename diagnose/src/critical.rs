//! Per trace: the critical path (the chain of calls the request actually
//! waited on) and the component it is blamed on. Calls that overlap in time
//! ran in parallel and only the last to answer held the caller up; calls
//! one after the other all did. The blame is the largest component summed
//! over the slow calls of that chain, and the culprit the call that added
//! most of it.

use crate::attribution::{Attribution, Verdict};
use crate::rpc::Edge;

/// The critical path of one trace and what it is blamed on.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceBlame {
    /// Index into the diagnosis' trace ids.
    pub trace: u32,
    /// Edges on the critical path, outermost call first.
    pub path: Vec<u32>,
    /// Wall time from the first call's start to the last answer, ns.
    pub span_ns: i64,
    /// `Ok` when no call on the path is slow.
    pub verdict: Verdict,
    /// Excess of that component summed over the path, ns.
    pub excess_ns: f64,
    /// The edge that added most of it.
    pub culprit_edge: Option<u32>,
}

/// One [`TraceBlame`] per trace that has edges, in trace order.
pub fn critical_paths(edges: &[Edge], attr: &[Attribution]) -> Vec<TraceBlame> {
    let n_traces = edges
        .iter()
        .map(|e| e.trace as usize + 1)
        .max()
        .unwrap_or(0);
    let mut tops: Vec<Vec<u32>> = vec![Vec::new(); n_traces];
    let mut kids: Vec<Vec<u32>> = vec![Vec::new(); edges.len()];
    for (i, e) in edges.iter().enumerate() {
        match e.parent {
            Some(p) => kids[p as usize].push(i as u32),
            None => tops[e.trace as usize].push(i as u32),
        }
    }
    tops.into_iter()
        .enumerate()
        .filter(|(_, t)| !t.is_empty())
        .map(|(trace, top)| {
            let mut path = Vec::new();
            walk(edges, &kids, top, &mut path);
            let first = path.iter().map(|&i| edges[i as usize].cs).min();
            let last = path.iter().map(|&i| edges[i as usize].cr).max();
            let (verdict, excess_ns, culprit_edge) = blame(&path, attr);
            TraceBlame {
                trace: trace as u32,
                span_ns: last.zip(first).map_or(0, |(l, f)| l - f),
                path,
                verdict,
                excess_ns,
                culprit_edge,
            }
        })
        .collect()
}

/// Appends the critical calls among `calls` (siblings) and below them.
fn walk(edges: &[Edge], kids: &[Vec<u32>], mut calls: Vec<u32>, path: &mut Vec<u32>) {
    calls.sort_unstable_by_key(|&c| edges[c as usize].cs);
    let mut stage: Option<(u32, i64)> = None; // (last to answer, stage end)
    let mut picked = Vec::new();
    for c in calls {
        let e = &edges[c as usize];
        match stage {
            Some((best, end)) if e.cs <= end => {
                let best = if e.cr > edges[best as usize].cr {
                    c
                } else {
                    best
                };
                stage = Some((best, end.max(e.cr)));
            }
            _ => {
                picked.extend(stage.map(|s| s.0));
                stage = Some((c, e.cr));
            }
        }
    }
    picked.extend(stage.map(|s| s.0));
    for c in picked {
        path.push(c);
        walk(edges, kids, kids[c as usize].clone(), path);
    }
}

/// The component with the largest excess over the slow calls of `path`.
fn blame(path: &[u32], attr: &[Attribution]) -> (Verdict, f64, Option<u32>) {
    let part = |a: &Attribution, v: Verdict| match v {
        Verdict::Service => a.service,
        Verdict::Network => a.fabric,
        Verdict::Loss => a.loss,
        Verdict::Host => a.host,
        Verdict::Dependency => a.dependency,
        Verdict::Ok | Verdict::Downstream => 0.0,
    };
    let slow: Vec<u32> = path
        .iter()
        .copied()
        .filter(|&i| attr[i as usize].slow)
        .collect();
    [
        Verdict::Service,
        Verdict::Network,
        Verdict::Loss,
        Verdict::Host,
        Verdict::Dependency,
    ]
    .into_iter()
    .map(|v| {
        let sum: f64 = slow.iter().map(|&i| part(&attr[i as usize], v)).sum();
        let top = slow
            .iter()
            .copied()
            .max_by(|&a, &b| part(&attr[a as usize], v).total_cmp(&part(&attr[b as usize], v)));
        (v, sum, top)
    })
    .filter(|(_, sum, _)| *sum > 0.0)
    .max_by(|a, b| a.1.total_cmp(&b.1))
    .unwrap_or((Verdict::Ok, 0.0, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(trace: u32, parent: Option<u32>, cs: i64, cr: i64) -> Edge {
        Edge {
            trace,
            parent,
            ..Edge::call(0, 0, cs, cr)
        }
    }

    #[test]
    fn parallel_calls_keep_the_last_to_answer_and_sequential_ones_all_count() {
        // Trace 0: call 0 makes two parallel calls (1 answers last) and then
        // call 3; call 1 makes call 4.
        let edges = vec![
            edge(0, None, 0, 100),
            edge(0, Some(0), 10, 50),
            edge(0, Some(0), 12, 30),
            edge(0, Some(0), 60, 90),
            edge(0, Some(1), 20, 40),
        ];
        let mut attr = vec![Attribution::default(); edges.len()];
        attr[4].slow = true;
        attr[4].fabric = 5e6;
        attr[2].slow = true;
        attr[2].service = 9e6; // off the critical path: not blamed
        let t = critical_paths(&edges, &attr);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].path, vec![0, 1, 4, 3]);
        assert_eq!(t[0].span_ns, 100);
        assert_eq!(
            (t[0].verdict, t[0].excess_ns, t[0].culprit_edge),
            (Verdict::Network, 5e6, Some(4))
        );
    }

    #[test]
    fn a_trace_without_slow_calls_is_ok() {
        let edges = vec![edge(0, None, 0, 10), edge(1, None, 5, 8)];
        let attr = vec![Attribution::default(); 2];
        let t = critical_paths(&edges, &attr);
        assert_eq!(t.len(), 2);
        assert!(t
            .iter()
            .all(|b| b.verdict == Verdict::Ok && b.culprit_edge.is_none()));
    }
}
