//! Call graphs that never saw one of the fan-outs the test runs take: the
//! learned graph with each variant that is another of its service's and
//! caller's with calls skipped taken out in turn (its caller's other
//! variants taking its share), as a short training capture would miss a
//! cache that warmed up later or a login that goes no further. The
//! reconstruction must find those requests' calls skipped from the calls
//! the service made. At a service that gathers, only the variants learned
//! by arrival are taken out: its callers' own are what a request falls
//! back on where its arrival is not known.

use intpath_diagnose::reconstruct::callgraph::{Arrival, CallGraph, Variant};
use std::collections::BTreeMap;

/// Per variant that is a strict subset of another of its service and
/// caller (or arrival): what was taken out (`service<-caller callees`,
/// `service@last callees`) and the graph without it.
pub fn without_subsets(cg: &CallGraph) -> Vec<(String, CallGraph)> {
    let mut out = Vec::new();
    for (service, vs) in &cg.services {
        let gathers = cg.gathering.contains_key(service);
        for (i, v) in vs.iter().enumerate() {
            let class = |w: &Variant| w.caller == v.caller && w.arrival == v.arrival;
            let subset = (vs.iter().enumerate()).any(|(j, w)| j != i && class(w) && within(v, w));
            if !subset || (gathers && v.arrival.is_none()) {
                continue;
            }
            let mut left = vs.clone();
            left.remove(i);
            let total: f64 = left.iter().filter(|w| class(w)).map(|w| w.share).sum();
            for w in left.iter_mut().filter(|w| class(w)) {
                w.share /= total;
            }
            let mut pruned = cg.clone();
            pruned.services.insert(service.clone(), left);
            out.push((describe(service, v), pruned));
        }
    }
    out
}

/// Whether `v`'s calls are `w`'s with some left out.
fn within(v: &Variant, w: &Variant) -> bool {
    let (a, b) = (counts(v), counts(w));
    a != b && a.iter().all(|(c, n)| b.get(c).is_some_and(|m| m >= n))
}

fn counts(v: &Variant) -> BTreeMap<&str, usize> {
    let mut m = BTreeMap::new();
    for c in v.slots() {
        *m.entry(c).or_default() += 1;
    }
    m
}

/// `service<-caller a+b`, `-` for a variant without calls.
fn describe(service: &str, v: &Variant) -> String {
    let calls: Vec<&str> = v.slots().collect();
    let calls = if calls.is_empty() {
        "-".to_owned()
    } else {
        calls.join("+")
    };
    match (&v.caller, v.arrival) {
        (Some(c), _) => format!("{service}<-{c} {calls}"),
        (None, Some(Arrival::Last)) => format!("{service}@last {calls}"),
        (None, Some(Arrival::Earlier)) => format!("{service}@earlier {calls}"),
        (None, None) => format!("{service} {calls}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(stages: &[&[&str]], share: f64) -> Variant {
        Variant {
            stages: (stages.iter())
                .map(|s| s.iter().map(|c| c.to_string()).collect())
                .collect(),
            share,
            caller: None,
            arrival: None,
        }
    }

    #[test]
    fn each_variant_that_skips_anothers_calls_is_taken_out_in_turn() {
        let cg = CallGraph {
            services: [(
                "frontend".to_owned(),
                vec![
                    variant(&[&["search"], &["profile"]], 0.6),
                    variant(&[&["user"], &["reservation"]], 0.2),
                    variant(&[&["user"]], 0.1),
                    variant(&[], 0.1),
                ],
            )]
            .into(),
            ..CallGraph::default()
        };
        let cuts = without_subsets(&cg);
        let names: Vec<&str> = cuts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec!["frontend user", "frontend -"]);
        let left = &cuts[0].1.services["frontend"];
        assert_eq!(left.len(), 3);
        let shares: Vec<f64> = left.iter().map(|v| (v.share * 90.0).round()).collect();
        assert_eq!(shares, vec![60.0, 20.0, 10.0]);
    }

    #[test]
    fn at_a_service_that_gathers_only_the_variants_by_arrival_are_taken_out() {
        let by = |caller: Option<&str>, arrival, stages: &[&[&str]], share| Variant {
            caller: caller.map(str::to_owned),
            arrival,
            ..variant(stages, share)
        };
        let cg = CallGraph {
            services: [(
                "review".to_owned(),
                vec![
                    by(Some("text"), None, &[&["store"]], 0.2),
                    by(Some("text"), None, &[], 0.8),
                    by(None, Some(Arrival::Last), &[&["store"]], 0.9),
                    by(None, Some(Arrival::Last), &[], 0.1),
                    by(None, Some(Arrival::Earlier), &[], 1.0),
                ],
            )]
            .into(),
            gathering: [("review".to_owned(), 5)].into(),
        };
        let cuts = without_subsets(&cg);
        let names: Vec<&str> = cuts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec!["review@last -"]);
        let left = &cuts[0].1.services["review"];
        let last: Vec<f64> = (left.iter().filter(|v| v.arrival == Some(Arrival::Last)))
            .map(|v| v.share)
            .collect();
        assert_eq!(last, vec![1.0]);
    }
}
