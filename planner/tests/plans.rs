//! Property tests: on thousands of random graphs, connected or not, every
//! planner's output passes the checker, `euler` and `balanced` use exactly
//! the minimum number of paths, the hop limit holds, and the checker
//! rejects every mutated plan.

use intpath_core::plan::{NodeName, Plan, ProbePath};
use intpath_core::topo::{Topology, TopologyBuilder};
use intpath_planner::{
    check, hostless_ends, is_hosted, lower_bound, plan, Algo, CheckOptions, PlanOptions,
};
use proptest::prelude::*;
use std::collections::HashSet;
use std::net::Ipv4Addr;

/// A multigraph on up to `n` switches (parallel links allowed, no
/// self-loops, any number of components) with a few hosts.
fn topology() -> impl Strategy<Value = Topology> {
    (1usize..14)
        .prop_flat_map(|n| {
            let edges = prop::collection::vec((0..n, 0..n), 0..40);
            let hosts = prop::collection::vec(0..n, 0..4);
            (Just(n), edges, hosts)
        })
        .prop_map(|(n, edges, hosts)| {
            let mut b = TopologyBuilder::new("proptest");
            for i in 1..=n {
                b.switch(format!("s{i}"), i as u32);
            }
            for (u, v) in edges.into_iter().filter(|(u, v)| u != v) {
                b.link(format!("s{}", u + 1), None, format!("s{}", v + 1), None);
            }
            for (i, s) in hosts.into_iter().enumerate() {
                let name = format!("h{}", i + 1);
                b.host(
                    &name,
                    Ipv4Addr::new(10, 0, 0, i as u8 + 1),
                    Default::default(),
                );
                b.link(name, Some(0), format!("s{}", s + 1), None);
            }
            b.build().expect("valid by construction")
        })
}

fn options() -> impl Strategy<Value = PlanOptions> {
    (
        prop::sample::select(Algo::ALL.to_vec()),
        prop::option::of(1usize..12),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(algo, max_hops, directed, include_hosts)| PlanOptions {
            algo,
            max_hops,
            directed,
            include_hosts,
            ..PlanOptions::default()
        })
}

fn strict(o: &PlanOptions) -> CheckOptions {
    CheckOptions {
        max_links: Some(o.hop_limit().unwrap()),
        directed: Some(o.directed),
        include_hosts: Some(o.include_hosts),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn every_plan_passes_the_check(t in topology(), o in options()) {
        let p = plan(&t, &o).unwrap();
        let r = check(&t, &p, &strict(&o));
        prop_assert!(r.is_ok(), "{:?}\n{}", o, r.unwrap_err());
        // Ids are 0.. in order, stats agree with the paths.
        prop_assert!(p.paths.iter().enumerate().all(|(i, q)| usize::from(q.id) == i));
        prop_assert_eq!(p.stats.paths, p.paths.len());
        prop_assert_eq!(p.stats.lower_bound, lower_bound(&t, &o).unwrap());
        prop_assert!(p.paths.len() >= p.stats.lower_bound);
        // Inferred coverage reads the same plan the same way.
        prop_assert!(check(&t, &p, &CheckOptions::default()).is_ok());
    }

    #[test]
    fn euler_and_balanced_use_the_minimum(t in topology(), directed in any::<bool>(), include_hosts in any::<bool>()) {
        let base = PlanOptions { max_hops: Some(usize::MAX), directed, include_hosts, ..PlanOptions::default() };
        let euler = plan(&t, &PlanOptions { algo: Algo::Euler, ..base.clone() }).unwrap();
        let balanced = plan(&t, &PlanOptions { algo: Algo::Balanced, ..base.clone() }).unwrap();
        let paper = plan(&t, &PlanOptions { algo: Algo::Paper, ..base.clone() }).unwrap();
        let dfs = plan(&t, &PlanOptions { algo: Algo::Dfs, ..base.clone() }).unwrap();
        prop_assert_eq!(euler.paths.len(), euler.stats.lower_bound);
        prop_assert_eq!(balanced.paths.len(), balanced.stats.lower_bound);
        prop_assert_eq!(paper.paths.len(), paper.stats.lower_bound);
        prop_assert!(dfs.paths.len() >= dfs.stats.lower_bound);
        // Balancing starts from the Euler plan and never lengthens its longest path.
        prop_assert!(balanced.stats.max_len <= euler.stats.max_len);
    }

    #[test]
    fn ends_go_where_the_hosts_are(t in topology(), algo in prop::sample::select(Algo::ALL.to_vec()), include_hosts in any::<bool>()) {
        let o = PlanOptions { algo, max_hops: Some(usize::MAX), include_hosts, ..PlanOptions::default() };
        let p = plan(&t, &o).unwrap();
        if algo != Algo::Dfs {
            prop_assert_eq!(p.paths.len(), p.stats.lower_bound);
        }
        let hosted = |n: &str| is_hosted(&t, n);
        for q in &p.paths {
            if q.generator() == q.sink() {
                // A closed path can start anywhere on it.
                prop_assert!(hosted(q.generator()) || !q.nodes.iter().any(|n| hosted(n)), "{:?}", q);
            } else {
                // An open one runs from its hosted end.
                prop_assert!(hosted(q.generator()) || !hosted(q.sink()), "{:?}", q);
            }
        }
        // No path with both ends hosted meets one with neither where
        // swapping their tails would give both a hosted generator without
        // making either longer than the longer of the two.
        let visits = |q: &ProbePath| q.nodes.iter().cloned().collect::<HashSet<NodeName>>();
        let open = |q: &&ProbePath| q.generator() != q.sink();
        let rich: Vec<_> = p.paths.iter().filter(open).filter(|q| hosted(q.generator()) && hosted(q.sink())).collect();
        let poor: Vec<_> = p.paths.iter().filter(open).filter(|q| !hosted(q.generator()) && !hosted(q.sink())).collect();
        for r in &rich {
            let at = visits(r);
            for u in poor.iter().filter(|u| u.nodes.iter().any(|n| at.contains(n))) {
                let (lr, lu) = (r.len(), u.len());
                for (i, x) in r.nodes.iter().enumerate() {
                    for (j, _) in u.nodes.iter().enumerate().filter(|(_, y)| *y == x) {
                        let (a, b) = (i + lu - j, j + lr - i);
                        prop_assert!(a == 0 || b == 0 || a.max(b) > lr.max(lu), "{:?} meets {:?}", r, u);
                    }
                }
            }
        }
        // The check reports exactly the paths without a host at an end.
        let report = check(&t, &p, &strict(&o)).unwrap();
        let ids = |end: fn(&ProbePath) -> &str| -> Vec<u16> {
            p.paths.iter().filter(|q| !hosted(end(q))).map(|q| q.id).collect()
        };
        prop_assert_eq!(&report.hostless.generators, &ids(|q| q.generator()));
        prop_assert_eq!(&report.hostless.sinks, &ids(|q| q.sink()));
        prop_assert_eq!(report.hostless, hostless_ends(&t, &p));
    }

    #[test]
    fn the_check_rejects_mutated_plans(t in topology(), o in options(), m in 0usize..5, pick in any::<prop::sample::Index>(), other in any::<prop::sample::Index>()) {
        let p = plan(&t, &o).unwrap();
        prop_assume!(!p.paths.is_empty());
        let bad = mutate(&t, &p, m, pick.index(p.paths.len()), other);
        let r = check(&t, &bad, &strict(&o));
        prop_assert!(r.is_err(), "mutation {} accepted:\n{:?}", m, bad.paths);
    }
}

fn mutate(t: &Topology, p: &Plan, m: usize, i: usize, other: prop::sample::Index) -> Plan {
    let mut bad = p.clone();
    let path = &mut bad.paths[i];
    match m {
        // A path lost: its links are no longer covered.
        0 => {
            bad.paths.remove(i);
        }
        // A path twice: its links covered twice.
        1 => {
            let mut copy = path.clone();
            copy.id = u16::MAX;
            bad.paths.push(copy);
        }
        // The last hop cut off.
        2 => {
            if path.len() == 1 {
                bad.paths.remove(i);
            } else {
                path.nodes.pop();
                path.egress_ports.pop();
            }
        }
        // Another egress port: a different link or none at all.
        3 => {
            let h = other.index(path.len());
            path.egress_ports[h] = path.egress_ports[h].wrapping_add(1 + other.index(3) as u16);
        }
        // Another node at some position.
        _ => {
            let k = other.index(path.nodes.len());
            let names: Vec<&str> = t
                .switches()
                .iter()
                .map(|s| s.name.as_str())
                .chain(t.hosts().iter().map(|h| h.name.as_str()))
                .filter(|n| *n != path.nodes[k])
                .collect();
            path.nodes[k] = names
                .get(other.index(names.len().max(1)))
                .map_or("nowhere".into(), |&s| s.into());
        }
    }
    bad
}

#[test]
fn generated_fabrics_plan_at_the_bound() {
    for spec in [
        "fattree:k=4",
        "fattree:k=6",
        "fattree:k=8",
        "leafspine:spines=4,leaves=8,hosts=2",
        "leafspine:spines=3,leaves=7,hosts=1",
        "random:n=200,m=600,odd=80,seed=3",
        "paper-fig4",
    ] {
        let t = Topology::load(spec).unwrap();
        for algo in [Algo::Euler, Algo::Balanced] {
            for directed in [false, true] {
                let o = PlanOptions {
                    algo,
                    directed,
                    ..PlanOptions::default()
                };
                let p = plan(&t, &o).unwrap();
                check(&t, &p, &strict(&o)).unwrap();
                let limit = o.hop_limit().unwrap();
                assert!(p.stats.max_len <= limit, "{spec}");
                if algo == Algo::Euler {
                    continue;
                }
                // Balanced: exactly the bound, hop limit included.
                assert_eq!(
                    p.paths.len(),
                    p.stats.lower_bound,
                    "{spec} {algo} {directed}"
                );
            }
        }
    }
}

#[test]
fn paper_fig4_needs_two_paths_of_five_links() {
    let t = Topology::load("paper-fig4").unwrap();
    let p = plan(&t, &PlanOptions::default()).unwrap();
    assert_eq!(p.paths.len(), 2);
    assert_eq!(p.stats.max_len, 5);
    // Every end of a path is one of the four odd switches.
    for q in &p.paths {
        for end in [q.generator(), q.sink()] {
            assert!(["s2", "s3", "s5", "s7"].contains(&end), "{end}");
        }
    }
}

#[test]
fn closed_paths_start_at_a_switch_with_a_host() {
    // k=4: every switch has even degree, one closed path; edge switches have hosts.
    let t = Topology::load("fattree:k=4").unwrap();
    let p = plan(&t, &PlanOptions::default()).unwrap();
    assert_eq!(p.paths.len(), 1);
    assert!(t.hosts_of(p.paths[0].generator()).count() > 0);
    // With a binding limit the cuts move onto host switches where the
    // limit leaves room (here for at least three of the four paths).
    let p = plan(
        &t,
        &PlanOptions {
            max_hops: Some(10),
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(p.paths.len(), 4);
    assert!(t.hosts_of(p.paths[0].generator()).count() > 0);
    let hosted = p
        .paths
        .iter()
        .filter(|q| t.hosts_of(q.generator()).count() > 0)
        .count();
    assert!(hosted >= 3, "{:?}", p.paths);
}

#[test]
fn check_messages_say_what_is_wrong() {
    let t = Topology::load("paper-fig4").unwrap();
    let o = PlanOptions::default();
    let p = plan(&t, &o).unwrap();
    let mut bad = p.clone();
    bad.paths[0].egress_ports[0] = 99;
    bad.paths.push(p.paths[1].clone());
    let e = check(&t, &bad, &strict(&o)).unwrap_err().to_string();
    let first = &p.paths[0].nodes[0];
    assert!(
        e.contains(&format!("path 0: hop 0: {first} has no port 99")),
        "{e}"
    );
    assert!(e.contains("path 1: id used twice"), "{e}");
    assert!(e.contains("is covered 2 times (paths 1, 1)"), "{e}");
    assert!(e.contains("is not covered"), "{e}");
    let short = CheckOptions {
        max_links: Some(3),
        ..strict(&o)
    };
    let e = check(&t, &p, &short).unwrap_err().to_string();
    assert!(
        e.contains("path 0: 5 links, over the hop limit of 3"),
        "{e}"
    );
}

/// One host on each of `switches`.
fn hosts_on(b: &mut TopologyBuilder, switches: &[&str]) {
    for (i, s) in switches.iter().enumerate() {
        let name = format!("h{}", i + 1);
        b.host(
            &name,
            Ipv4Addr::new(10, 0, 0, i as u8 + 1),
            Default::default(),
        );
        b.link(name, Some(0), *s, None);
    }
}

/// A ring s1..s4 with hosts on s1 and s3 only, with link `cut` left out.
fn ring_without(cut: usize) -> Topology {
    let mut b = TopologyBuilder::new("ring");
    for i in 1..=4 {
        b.switch(format!("s{i}"), i);
    }
    for i in 0..4 {
        if i != cut {
            b.link(
                format!("s{}", i + 1),
                None,
                format!("s{}", (i + 1) % 4 + 1),
                None,
            );
        }
    }
    hosts_on(&mut b, &["s1", "s3"]);
    b.build().unwrap()
}

#[test]
fn a_cut_ring_is_probed_from_a_switch_with_a_host() {
    let t = ring_without(4);
    let p = plan(&t, &PlanOptions::default()).unwrap();
    assert_eq!(p.paths.len(), 1);
    assert!(
        ["s1", "s3"].contains(&p.paths[0].generator()),
        "{:?}",
        p.paths
    );
    for cut in 0..4 {
        let t = ring_without(cut);
        for algo in [Algo::Euler, Algo::Balanced, Algo::Paper] {
            let o = PlanOptions {
                algo,
                ..PlanOptions::default()
            };
            let p = plan(&t, &o).unwrap();
            assert_eq!(p.paths.len(), 1, "cut {cut} {algo}");
            // Every cut leaves s1 or s3 as an end: the probe starts there.
            let q = &p.paths[0];
            assert!(
                ["s1", "s3"].contains(&q.generator()),
                "cut {cut} {algo}: {q:?}"
            );
            let report = check(&t, &p, &strict(&o)).unwrap();
            assert!(report.hostless.generators.is_empty());
            // The other end is s2 or s4: its probes leave by the CPU port.
            assert_eq!(report.hostless.sinks, vec![q.id], "cut {cut} {algo}");
        }
    }
}

#[test]
fn trails_with_two_hosted_ends_lend_one_to_a_trail_with_none() {
    // A star: centre s1, leaves s2..s5; hosts on s2 and s3 only. Two paths
    // whatever the pairing, but only s2-…-s4 / s3-…-s5 style pairings let
    // both start at a host.
    let mut b = TopologyBuilder::new("star");
    for i in 1..=5 {
        b.switch(format!("s{i}"), i);
    }
    for i in 2..=5 {
        b.link("s1", None, format!("s{i}"), None);
    }
    hosts_on(&mut b, &["s2", "s3"]);
    let t = b.build().unwrap();
    for algo in [Algo::Euler, Algo::Balanced, Algo::Paper] {
        let o = PlanOptions {
            algo,
            ..PlanOptions::default()
        };
        let p = plan(&t, &o).unwrap();
        assert_eq!(p.paths.len(), 2, "{algo}");
        let gens: HashSet<&str> = p.paths.iter().map(|q| q.generator()).collect();
        assert_eq!(gens, HashSet::from(["s2", "s3"]), "{algo}: {:?}", p.paths);
    }
}
