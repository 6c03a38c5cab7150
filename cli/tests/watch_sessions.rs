//! `intpath watch` is steered by nobody else: the ring lab of reference
//! switches in a network namespace, with probes flowing, watch and the
//! collector following the plan file. `switches status` run again and
//! again beside watch must neither fail nor make watch see a switch down;
//! and when most of the network really stops answering, watch must refuse
//! to replan onto what is left, keep the plan in force and say so.
//!
//! Needs root (network namespaces): ignored unless run with
//! `--include-ignored`.

#[path = "common/ring.rs"]
mod ring;

use ring::{bin, Lab};
use std::time::Duration;

const SWITCHES: u16 = 4;

/// The ring, all hosted, deployed and watched, with probes arriving on
/// every path: (lab, switch map, plan file, the plan as first deployed).
fn watched_ring(prefix: &str, grpc_base: u16) -> (Lab, String, String, String) {
    let mut lab = Lab::new(prefix);
    let (topo, map) = lab.ring(SWITCHES, &[1, 2, 3, 4], grpc_base);
    let (plan, db) = lab.plan_deploy_collect_watch(&topo, &map);
    lab.send_from_every_host(&plan, SWITCHES);
    lab.wait_for_every_path(&db, 0, "probes of the first plan");
    let before = std::fs::read_to_string(&plan).unwrap();
    (lab, map, plan, before)
}

#[test]
#[ignore = "needs root"]
fn switches_status_beside_watch_never_makes_a_switch_look_down() {
    let (lab, map, plan, plan_before) = watched_ring("iws", 11300);

    let intpath = bin("intpath");
    for i in 0..25 {
        let o = lab
            .ns
            .cmd(&intpath)
            .args(["switches", "status", "--switches", &map])
            .output()
            .unwrap();
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(o.status.success(), "status call {i}:\n{out}{err}");
        assert_eq!(out.matches(" up, ").count(), 4, "status call {i}:\n{out}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // A round or two for watch to act on anything it saw.
    std::thread::sleep(Duration::from_secs(2));
    let log = lab.log("watch.err");
    assert!(!log.contains("switch unreachable"), "{log}");
    assert!(!log.contains("replanned"), "{log}");
    assert!(!log.contains("refusing to replan"), "{log}");
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), plan_before);
}

#[test]
#[ignore = "needs root"]
fn a_replan_that_would_drop_most_of_the_network_is_refused() {
    let (mut lab, map, plan, plan_before) = watched_ring("iwr", 11400);
    let parsed: serde_json::Value = serde_json::from_str(&plan_before).unwrap();
    let generator = parsed["paths"][0]["nodes"][0].as_str().unwrap().to_owned();

    // Every switch but the generator's stops answering.
    let gone: Vec<String> = (1..=SWITCHES)
        .map(|n| format!("s{n}"))
        .filter(|s| *s != generator)
        .collect();
    lab.kill(&gone);
    lab.wait_until("watch to refuse the replan", 30, || {
        lab.log("watch.err").contains("refusing to replan")
    });
    let log = lab.log("watch.err");
    let line = log
        .lines()
        .find(|l| l.contains("refusing to replan"))
        .unwrap();
    assert!(
        line.contains("keeping the plan in force (1 paths)")
            && line.contains(&format!("drop 3 of 4 switches ({})", gone.join(", "))),
        "{line}"
    );
    assert!(
        !log.contains("replanned on the surviving topology"),
        "{log}"
    );
    // The plan in force stays, on file and on the switch that answers.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), plan_before);
    let o = lab
        .ns
        .cmd(bin("intpath"))
        .args(["switches", "status", "--switches", &map])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let survivor = out
        .lines()
        .find(|l| l.starts_with(&format!("{generator} ")))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(survivor.contains("generator=1"), "{out}");
    // Refused once, not every round.
    assert_eq!(log.matches("refusing to replan").count(), 1, "{log}");
}
