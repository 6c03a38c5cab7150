//! Services that gather a request's parts: several services call one of
//! them for the same request, and the call that arrives last makes the
//! calls that follow (DeathStarBench's compose-review counts a review's
//! five uploads, and the one that completes the count stores the review).
//!
//! At such a service a request's caller says little about its fan-out,
//! and where it arrived among its own request's visits says nearly all;
//! but which visits are one request's is what reconstruction infers. So a
//! gathering service is solved after every other: the links found there
//! group its incoming requests by the root request each belongs to, and
//! each group's last arrival takes the variants learned for last visits
//! ([`super::callgraph::Arrival`]). A request whose group is not known in
//! full (a link missing on its way up) keeps its caller's variants.

use super::callgraph::Arrival;
use super::model::Rpcs;
use super::view::View;
use std::collections::HashMap;

/// Per RPC, the root request of its trace, following `parent` up (`None`
/// where a link on the way is missing). A root is its own.
pub fn roots(rpcs: &Rpcs, parent: &[Option<u32>]) -> Vec<Option<u32>> {
    let n = rpcs.rpcs.len();
    // Per RPC: `None` while not worked out, then its root.
    let mut memo: Vec<Option<Option<u32>>> = vec![None; n];
    let mut path = Vec::new();
    for i in 0..n {
        path.clear();
        let mut at = i;
        let root = loop {
            if let Some(r) = memo[at] {
                break r;
            }
            path.push(at);
            if rpcs.rpcs[at].caller.is_none() {
                break Some(at as u32);
            }
            // Parents inferred in error could loop; a path longer than
            // every RPC is one.
            match parent.get(at).copied().flatten() {
                Some(p) if path.len() <= n => at = p as usize,
                _ => break None,
            }
        };
        for &p in &path {
            memo[p] = Some(root);
        }
    }
    memo.into_iter().map(Option::flatten).collect()
}

/// Where each visit `(rpc, service, arrival time)` arrived among its root
/// request's visits to the same service, for requests with at least
/// `min_visits` (and two) visits there.
pub fn arrivals(
    visits: impl IntoIterator<Item = (u32, u16, i64)>,
    roots: &[Option<u32>],
    min_visits: usize,
) -> HashMap<u32, Arrival> {
    let mut groups: HashMap<(u32, u16), Vec<(i64, u32)>> = HashMap::new();
    for (rpc, service, t) in visits {
        if let Some(root) = roots.get(rpc as usize).copied().flatten() {
            groups.entry((root, service)).or_default().push((t, rpc));
        }
    }
    let mut out = HashMap::new();
    for group in groups.into_values() {
        if group.len() < min_visits.max(2) {
            continue;
        }
        let last = group.iter().max().copied();
        for v in group {
            let a = if Some(v) == last {
                Arrival::Last
            } else {
                Arrival::Earlier
            };
            out.insert(v.1, a);
        }
    }
    out
}

/// Marks where each of `view`'s incoming requests arrived among its
/// request's `parts` visits, by the roots the other services' links give.
pub fn mark(view: &mut View, roots: &[Option<u32>], parts: usize) {
    let visits = (view.ins.iter()).map(|x| (x.rpc, view.service, x.start.t));
    let arrived = arrivals(visits, roots, parts);
    for x in &mut view.ins {
        x.arrival = arrived.get(&x.rpc).copied();
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{Rpc, Side};
    use super::*;

    fn rpc(caller: Option<u16>, callee: u16) -> Rpc {
        Rpc {
            caller,
            callee,
            client: None,
            server: Some(Side {
                span: 0,
                start: 0,
                end: 0,
                executor: Default::default(),
            }),
            truth: None,
            hidden: None,
        }
    }

    #[test]
    fn roots_follow_links_up_and_stop_where_one_is_missing_or_loops() {
        // 0 is a root; 1 and 2 are its calls, 3 is 2's; 4 has no link; 5
        // and 6 are each other's parents.
        let rpcs = Rpcs {
            services: ["a", "b", "c"].map(String::from).to_vec(),
            rpcs: vec![
                rpc(None, 0),
                rpc(Some(0), 1),
                rpc(Some(0), 1),
                rpc(Some(1), 2),
                rpc(Some(0), 1),
                rpc(Some(1), 2),
                rpc(Some(2), 1),
            ],
        };
        let parent = [None, Some(0), Some(0), Some(2), None, Some(6), Some(5)];
        let r = roots(&rpcs, &parent);
        assert_eq!(
            r,
            vec![Some(0), Some(0), Some(0), Some(0), None, None, None]
        );
    }

    #[test]
    fn the_last_of_a_requests_visits_is_told_from_the_earlier_ones() {
        // Root 0 visits service 7 three times (rpcs 1, 2, 3), root 4 once
        // (rpc 5), and a visit whose root is unknown (rpc 6).
        let roots = [Some(0), Some(0), Some(0), Some(0), Some(4), Some(4), None];
        let visits = [(1, 7, 30), (2, 7, 50), (3, 7, 10), (5, 7, 20), (6, 7, 99)];
        let a = arrivals(visits, &roots, 2);
        assert_eq!(a.get(&2), Some(&Arrival::Last));
        assert_eq!(a.get(&1), Some(&Arrival::Earlier));
        assert_eq!(a.get(&3), Some(&Arrival::Earlier));
        assert_eq!((a.get(&5), a.get(&6)), (None, None));
        // Where a request must visit four times, three known say nothing.
        assert!(arrivals(visits, &roots, 4).is_empty());
    }
}
