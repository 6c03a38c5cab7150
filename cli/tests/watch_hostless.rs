//! `intpath watch` and `probe-gen --follow-plan` keeping every path probed
//! when paths must start at switches without a host: a ring of four
//! reference switches with a host on s1 only (and the collector's). Cutting
//! s2–s3 leaves the line s3–s4–s1–s2, whose only path starts at s2 or s3:
//! no host can send on it. Watch must say so, naming the path and its
//! first switch; once a `--hostless` sender runs, its packet-outs must
//! bring probes on every path of the new plan.

#[path = "common/ring.rs"]
mod ring;

use ring::{Lab, COLLECTOR_IP};

#[test]
#[ignore = "needs root"]
fn paths_from_hostless_switches_are_reported_then_probed_by_packet_outs() {
    let mut lab = Lab::new("iwh");
    let (topo, map) = lab.ring(4, &[1], 11200);
    let (plan, db) = lab.plan_deploy_collect_watch(&topo, &map);
    lab.send(
        &plan,
        &[
            "--generator",
            "s1",
            "--iface",
            "h1-e0",
            "--src-ip",
            "10.0.0.1",
        ],
        "probe-gen-h1",
    );

    // The ring's one closed path starts at the hosted s1.
    let first_run = lab.wait_for_every_path(&db, 0, "probes of the first plan");

    lab.ns.ip(&["link", "set", "s2-e2", "down"]);
    lab.wait_until("watch to replan", 30, || {
        lab.log("watch.err")
            .contains("replanned on the surviving topology")
    });
    let new_plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let paths = new_plan["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 1, "{new_plan}");
    let first = paths[0]["nodes"][0].as_str().unwrap().to_owned();
    let id = paths[0]["id"].as_u64().unwrap();
    assert!(first == "s2" || first == "s3", "{new_plan}");

    // Nobody sends on it yet: an error line, not silence.
    let unsent = format!("first_switch=\"{first}\"");
    lab.wait_until("watch to report the unsent path", 20, || {
        lab.log("watch.err").lines().any(|l| {
            l.contains("ERROR")
                && l.contains("nobody sends on this path")
                && l.contains(&format!("path={id}"))
                && l.contains(&unsent)
        })
    });

    // The packet-out sender takes the paths no host can send on.
    lab.send(
        &plan,
        &[
            "--hostless",
            "--topo",
            &topo,
            "--switch-map",
            &map,
            "--src-ip",
            COLLECTOR_IP,
        ],
        "probe-gen-hostless",
    );
    lab.wait_for_every_path(&db, first_run, "probes on every path of the new plan");
    eprintln!("{}", lab.log("watch.err"));
}
