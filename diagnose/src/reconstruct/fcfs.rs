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
