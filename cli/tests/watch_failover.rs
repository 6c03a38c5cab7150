//! `intpath watch` keeping coverage when a link dies, with every part real:
//! four reference switches in a ring inside a network namespace, joined by
//! veth pairs; probe-gen on every host following the plan file; the
//! collector capturing into SQLite and following the plan file too. One
//! link of the probe path is cut; watch must notice that the path went
//! silent, blame that link from the port counters, replan around it,
//! redeploy, and probes must then arrive on every new path.
//!
//! Needs root (network namespaces): ignored unless run with
//! `--include-ignored`.

#[path = "common/ring.rs"]
mod ring;

use ring::Lab;
use serde_json::Value;

const SWITCHES: u16 = 4;

/// `(switch, egress port)` of every hop of every path of a plan file.
fn hops(plan: &str) -> Vec<(String, u64)> {
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(plan).unwrap()).unwrap();
    let mut hops = Vec::new();
    for p in plan["paths"].as_array().unwrap() {
        let nodes = p["nodes"].as_array().unwrap();
        for (n, port) in nodes.iter().zip(p["egress_ports"].as_array().unwrap()) {
            hops.push((n.as_str().unwrap().to_owned(), port.as_u64().unwrap()));
        }
    }
    hops
}

#[test]
#[ignore = "needs root"]
fn watch_replans_around_a_cut_link_and_probes_flow_again() {
    let mut lab = Lab::new("ipw");
    let (topo, map) = lab.ring(SWITCHES, &[1, 2, 3, 4], 11100);
    let (plan, db) = lab.plan_deploy_collect_watch(&topo, &map);
    lab.send_from_every_host(&plan, SWITCHES);

    // Before the cut: the one planned path delivers.
    let before = hops(&plan);
    let first_run = lab.wait_for_every_path(&db, 0, "probes of the first plan");

    // Cut the link the path crosses second.
    let (from, port) = before[1].clone();
    lab.ns
        .ip(&["link", "set", &format!("{from}-e{port}"), "down"]);
    let n: u16 = from[1..].parse().unwrap();
    let (peer, peer_port) = if port == 2 {
        (format!("s{}", n % SWITCHES + 1), 3u64)
    } else {
        (format!("s{}", (n + SWITCHES - 2) % SWITCHES + 1), 2)
    };

    lab.wait_until("watch to replan", 30, || {
        lab.log("watch.err")
            .contains("replanned on the surviving topology")
    });
    let log = lab.log("watch.err");
    let blamed_one_way = format!("{from}:{port}->{peer}:{peer_port}");
    let blamed_other_way = format!("{peer}:{peer_port}->{from}:{port}");
    assert!(
        log.contains("port counters blame")
            && (log.contains(&blamed_one_way) || log.contains(&blamed_other_way)),
        "watch did not blame {blamed_one_way}:\n{log}"
    );
    let after = hops(&plan);
    assert!(
        !after.contains(&(from.clone(), port)) && !after.contains(&(peer.clone(), peer_port)),
        "the new plan still crosses the cut link: {after:?}"
    );
    // The three links left form a line: still one path, over all of them.
    assert_eq!(after.len(), before.len() - 1, "{after:?}");

    // After the replan: a new collector run on the new plan, and every one
    // of its paths delivers.
    lab.wait_for_every_path(&db, first_run, "probes on every path of the new plan");
    // For `--nocapture`: what watch told the operator.
    eprintln!("{}", lab.log("watch.err"));
}
