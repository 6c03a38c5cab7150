//! First come, first served (TraceWeaver's strawman): calls to each callee
//! go, in the order they were sent, to the earliest-arrived request in
//! progress that has not yet called that callee.

use super::view::View;
use std::collections::HashSet;

/// Per call (index into `view.outs`): parent (index into `view.ins`).
pub fn link(view: &View) -> Vec<Option<(usize, f64)>> {
    let mut called: HashSet<(usize, u16)> = HashSet::new();
    let mut out = vec![None; view.outs.len()];
    // Requests before `lo` ended before the current call was sent, and so
    // before every later one (calls come in send order).
    let mut lo = 0;
    for (o, call) in view.outs.iter().enumerate() {
        while lo < view.ins.len() && view.ins[lo].end.hi < call.req.lo {
            lo += 1;
        }
        let upto = view.ins.partition_point(|x| x.start.lo <= call.req.hi);
        let parent = (lo..upto)
            .find(|&i| view.ins[i].end.hi >= call.resp.lo && !called.contains(&(i, call.callee)));
        if let Some(i) = parent {
            called.insert((i, call.callee));
            out[o] = Some((i, 1.0));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconstruct::view::{Ev, In, Out};

    #[test]
    fn earliest_open_request_takes_each_callee_once() {
        let span = |rpc, a, b| In {
            rpc,
            caller: None,
            start: Ev::exact(a),
            end: Ev::exact(b),
            queued: 0,
            unit: None,
            arrival: None,
        };
        let call = |rpc, a, b| Out {
            rpc,
            callee: 7,
            req: Ev::exact(a),
            resp: Ev::exact(b),
            unit: None,
        };
        let mut v = View {
            ins: vec![span(0, 0, 100), span(1, 10, 50)],
            outs: vec![call(2, 20, 40), call(3, 25, 45), call(4, 60, 70)],
            ..View::default()
        };
        v.by_callee.insert(7, vec![0, 1, 2]);
        let links = link(&v);
        let parents: Vec<Option<usize>> = links.iter().map(|l| l.map(|p| p.0)).collect();
        // FCFS: first call to the earliest request, second to the next;
        // the third finds request 0 already served and 1 closed.
        assert_eq!(parents, vec![Some(0), Some(1), None]);
        // WAP5 takes the most recent request in progress for each.
        let recent: Vec<Option<usize>> = crate::reconstruct::wap5::link(&v)
            .iter()
            .map(|l| l.map(|p| p.0))
            .collect();
        assert_eq!(recent, vec![Some(1), Some(1), Some(0)]);
    }
}
