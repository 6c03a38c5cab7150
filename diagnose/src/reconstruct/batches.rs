//! Optimisation batches (TraceWeaver §4.1, step 2): incoming requests in
//! start order, cut where the request that finished last so far ended
//! before the next one starts and shares no candidate call with it, or
//! where a batch reached its maximum size.

use super::view::In;

/// TraceWeaver's maximum batch size (Table 1, B = 30).
pub const MAX_BATCH: usize = 30;

/// Batch boundaries over `ins` (sorted by start): ranges of indices.
/// `cands[i]` are the calls (sorted) that any candidate of `ins[i]` uses.
pub fn batches(ins: &[In], cands: &[Vec<usize>], max: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut latest: Option<usize> = None;
    for i in 0..ins.len() {
        let j = match latest {
            Some(j) if ins[j].end.t >= ins[i].end.t => j,
            _ => i,
        };
        latest = Some(j);
        let Some(next) = ins.get(i + 1) else { break };
        let full = i + 1 - start >= max;
        let apart = ins[j].end.hi < next.start.lo && !shares(&cands[j], &cands[i + 1]);
        if full || apart {
            out.push(start..i + 1);
            start = i + 1;
            latest = None;
        }
    }
    if start < ins.len() {
        out.push(start..ins.len());
    }
    out
}

fn shares(a: &[usize], b: &[usize]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconstruct::view::Ev;

    fn span(a: i64, b: i64) -> In {
        In {
            rpc: 0,
            caller: None,
            start: Ev::exact(a),
            end: Ev::exact(b),
            queued: 0,
            unit: None,
            arrival: None,
        }
    }

    #[test]
    fn cuts_only_where_windows_and_candidates_part() {
        // 0 and 1 overlap; 2 starts after both ended; 3 overlaps 2.
        let ins = [span(0, 10), span(5, 20), span(30, 40), span(35, 50)];
        let cands = vec![vec![1], vec![2], vec![3], vec![4]];
        assert_eq!(batches(&ins, &cands, 30), vec![0..2, 2..4]);
        // The long span 0 still runs when 2 starts: no cut after 1.
        let ins = [span(0, 35), span(5, 20), span(30, 40), span(45, 50)];
        assert_eq!(batches(&ins, &cands, 30), vec![0..3, 3..4]);
        // A candidate shared with the latest-ending span forbids the cut.
        let cands = vec![vec![1], vec![2], vec![3, 7], vec![7]];
        assert_eq!(batches(&ins, &cands, 30), vec![0..4]);
        // The size bound cuts regardless.
        assert_eq!(batches(&ins, &cands, 2), vec![0..2, 2..4]);
    }
}
