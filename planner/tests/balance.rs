//! Balance under the hop limit: at the 44 links sr_int.p4 allows, the
//! balanced plan has exactly the lower-bound path count and no path longer
//! than 1.25 × the ideal `ceil(links / paths)`, on the fat trees k = 6…16,
//! leaf-spine fabrics and random graphs with 10–40 odd switches; and it
//! passes the check.

use intpath_core::topo::Topology;
use intpath_planner::{check, plan, Algo, CheckOptions, PlanOptions};
use proptest::prelude::*;

/// The hop limit `intpath plan` allows (sr_int.p4 holds 45 records).
const HOPS: usize = 44;

/// Plans `t` balanced under `hops` and holds it to the promise; the
/// failure names the topology and the numbers.
fn balanced_within(t: &Topology, hops: usize, directed: bool) -> Result<(), String> {
    let o = PlanOptions {
        algo: Algo::Balanced,
        max_hops: Some(hops),
        directed,
        ..PlanOptions::default()
    };
    let p = plan(t, &o).map_err(|e| e.to_string())?;
    let co = CheckOptions {
        max_links: Some(hops),
        directed: Some(directed),
        include_hosts: Some(false),
    };
    check(t, &p, &co).map_err(|e| format!("{}: {e}", t.origin()))?;
    let links: usize = p.paths.iter().map(|q| q.len()).sum();
    if p.paths.len() != p.stats.lower_bound {
        return Err(format!(
            "{}: {} paths, the bound is {}",
            t.origin(),
            p.paths.len(),
            p.stats.lower_bound
        ));
    }
    let ideal = links.div_ceil(p.paths.len().max(1));
    if p.stats.max_len * 4 > ideal * 5 {
        return Err(format!(
            "{}: longest path {} links, over 1.25 × {ideal} ({} links in {} paths)",
            t.origin(),
            p.stats.max_len,
            links,
            p.paths.len()
        ));
    }
    Ok(())
}

#[test]
fn fat_trees_balance_within_the_hop_limit() {
    for k in (6..=16).step_by(2) {
        let t = Topology::load(&format!("fattree:k={k}")).unwrap();
        for directed in [false, true] {
            balanced_within(&t, HOPS, directed).unwrap();
        }
    }
}

#[test]
fn leaf_spines_balance_within_the_hop_limit() {
    for spines in 1..=12 {
        for leaves in 1..=40 {
            let t = Topology::load(&format!(
                "leafspine:spines={spines},leaves={leaves},hosts=1"
            ))
            .unwrap();
            balanced_within(&t, HOPS, false).unwrap();
        }
    }
}

#[test]
fn the_issue_examples_are_balanced() {
    // FatTree k=10 (500 links, 25 paths) and random n=80, m=200 with 20
    // odd switches (10 paths) were 2.2× and 2.15× the ideal.
    for (spec, paths, longest) in [
        ("fattree:k=10", 25, 25),
        ("random:n=80,m=200,odd=20,seed=1", 10, 25),
    ] {
        let t = Topology::load(spec).unwrap();
        let p = plan(
            &t,
            &PlanOptions {
                max_hops: Some(HOPS),
                ..PlanOptions::default()
            },
        )
        .unwrap();
        assert_eq!(p.paths.len(), paths, "{spec}");
        assert!(p.stats.max_len <= longest, "{spec}: {}", p.stats.max_len);
    }
}

/// A random connected graph with `odd` (10…40) odd-degree switches and an
/// average degree from 4 to 12: from sizes where the odd switches set the
/// path count to ones where the hop limit does.
fn random_graph() -> impl Strategy<Value = Topology> {
    (5usize..=20, 0usize..=180, 8usize..=24, any::<u16>())
        .prop_map(|(half, extra, degree2, seed)| {
            let odd = 2 * half;
            let n = odd.max(20) + extra;
            // `degree2` is twice the average degree: m = n * degree / 2.
            let m = (n * degree2 / 4).min(n * (n - 1) / 2);
            format!("random:n={n},m={m},odd={odd},seed={seed}")
        })
        .prop_filter_map("generator could not reach the odd count", |spec| {
            Topology::load(&spec).ok()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_graphs_balance_within_the_hop_limit(t in random_graph(), directed in any::<bool>()) {
        let r = balanced_within(&t, HOPS, directed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    /// Other hop limits, where they leave some room: when the limit sets
    /// the count and `paths × limit - links` is under one link a path, the
    /// trails must come out at exact lengths and the search can miss by a
    /// path (1 plan in 60,000 of this family at limits 4…44; none at 44
    /// in 40,000: `cargo run --release -p intpath-planner --example
    /// hoplimit -- sweep 20000 4 12 any`).
    #[test]
    fn random_graphs_balance_under_other_hop_limits(t in random_graph(), hops in 4usize..=43) {
        let links = t.switch_links().count();
        let o = PlanOptions { max_hops: Some(hops), ..PlanOptions::default() };
        let bound = intpath_planner::lower_bound(&t, &o).unwrap();
        prop_assume!(bound * hops >= links + bound);
        let r = balanced_within(&t, hops, false);
        prop_assert!(r.is_ok(), "hop limit {}: {}", hops, r.unwrap_err());
    }
}
