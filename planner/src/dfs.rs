//! The INT-path paper's DFS planner (its Fig. 2), kept as the baseline: a
//! depth-first traversal of the links from the first switch of each
//! component; the current path grows while the search goes deeper and ends
//! whenever it backtracks, the next path starting where the search resumes.

use super::graph::{Graph, NONE};
use super::Trail;

pub(crate) fn decompose(g: &Graph, comp: &[u32], ncomp: usize, directed: bool) -> Vec<Trail> {
    let mut used = vec![
        false;
        if directed {
            g.ends.len() * 2
        } else {
            g.ends.len()
        }
    ];
    let mut next = g.start[..g.n].to_vec();
    let mut seen = vec![false; ncomp];
    let mut trails = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    for (root, &c) in comp.iter().enumerate() {
        if c == NONE || seen[c as usize] {
            continue;
        }
        seen[c as usize] = true;
        stack.push(root as u32);
        let mut cur: Vec<u32> = Vec::new();
        let mut fresh = true;
        while let Some(&v) = stack.last() {
            let Some(found) = g.take_unused(v, directed, &mut used, &mut next) else {
                stack.pop();
                fresh = true;
                continue;
            };
            if fresh && !cur.is_empty() {
                trails.push(Trail::new(std::mem::take(&mut cur), c));
            }
            fresh = false;
            cur.push(found);
            stack.push(g.head(found));
        }
        if !cur.is_empty() {
            trails.push(Trail::new(cur, c));
        }
    }
    trails
}
