//! A FatTree k=4 (20 reference switches, 16 hosts) deployed over real
//! gRPC: every entry read back equals what plan and topology imply, a rerun
//! is a no-op, a changed plan is a minimal diff, and a switch killed and
//! restarted is re-synced by the next deploy.
//!
//! The plan here is the simplest valid one (one path per switch link), made
//! in the test so that deploy is checked independently of the planner.

use intpath_controller::deploy::host_routes;
use intpath_controller::deploy::{self, DeployOptions, SinkMode};
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_core::switch_map::SwitchMap;
use intpath_core::topo::Topology;
use intpath_p4rt::p4info::P4InfoIndex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

mod common;
use common::read_back;
use intpath_test_support::switch::Fleet;

/// One single-hop path per switch-to-switch link, in both orientations
/// alternately, ids from `first_id`.
fn link_plan(topo: &Topology, first_id: u16) -> Plan {
    let paths = topo
        .switch_links()
        .enumerate()
        .map(|(i, l)| {
            let (a, ap, b) = if i % 2 == 0 {
                (&l.a, l.a_port, &l.b)
            } else {
                (&l.b, l.b_port, &l.a)
            };
            ProbePath {
                id: first_id + i as u16,
                nodes: vec![a.into(), b.into()],
                egress_ports: vec![ap],
            }
        })
        .collect();
    Plan {
        topology: "fattree:k=4".into(),
        algo: "one-per-link".into(),
        paths,
        stats: PlanStats::default(),
    }
}

fn implied(
    ix: &P4InfoIndex,
    plan: &Plan,
    map: &SwitchMap,
    topo: &Topology,
) -> (
    BTreeMap<String, deploy::SwitchIntent>,
    BTreeMap<String, BTreeSet<String>>,
) {
    let intents = deploy::intents(plan, map, host_routes(topo), SinkMode::Collector).unwrap();
    let entries = common::implied(ix, &intents);
    (intents, entries)
}

fn totals(r: &[deploy::SwitchReport]) -> (usize, usize, usize) {
    r.iter().fold((0, 0, 0), |(i, m, d), r| {
        (i + r.inserts, m + r.modifies, d + r.deletes)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fattree_k4_deploy_rerun_change_restart() {
    let topo = Topology::load("fattree:k=4").unwrap();
    let mut fleet = Fleet::start(
        topo.switches()
            .iter()
            .map(|s| (s.name.clone(), u64::from(s.id))),
    );
    let ix = Arc::new(intpath_sr_int::p4info().unwrap());
    let opts = DeployOptions::default();
    let (hosts, links) = (topo.hosts().len(), topo.switch_links().count());
    assert_eq!((topo.switches().len(), hosts, links), (20, 16, 32));

    let plan = link_plan(&topo, 0);
    let (intents, want) = implied(&ix, &plan, &fleet.map, &topo);
    let r = deploy::deploy(ix.clone(), &fleet.map, &intents, &opts)
        .await
        .unwrap();
    // Every switch: switch id; every host: a route on every switch; every
    // path: a generator and a sink entry.
    assert_eq!(totals(&r), (20 * hosts + 2 * links, 20, 0));
    assert_eq!(read_back(&fleet.map, &ix).await, want);

    let r = deploy::deploy(ix.clone(), &fleet.map, &intents, &opts)
        .await
        .unwrap();
    assert_eq!(totals(&r), (0, 0, 0), "rerun is a no-op");

    // Changed plan: drop the last 4 paths, reverse the first 2.
    let mut changed = plan.clone();
    changed.paths.truncate(links - 4);
    for p in &mut changed.paths[..2] {
        let (a, b) = (p.nodes[0].clone(), p.nodes[1].clone());
        let (_, back_port) = topo.peer(&a, p.egress_ports[0]).unwrap();
        *p = ProbePath {
            id: p.id,
            nodes: vec![b, a],
            egress_ports: vec![back_port],
        };
    }
    let (intents2, want2) = implied(&ix, &changed, &fleet.map, &topo);
    let r = deploy::deploy(ix.clone(), &fleet.map, &intents2, &opts)
        .await
        .unwrap();
    // 4 paths gone: 4 generators + 4 sinks deleted. 2 paths reversed: their
    // generator and sink move to the other end (delete + insert each).
    assert_eq!(totals(&r), (4, 0, 8 + 4));
    assert_eq!(read_back(&fleet.map, &ix).await, want2);

    // A switch restarts empty; the next deploy re-syncs only it.
    let victim = topo.switches()[0].name.clone();
    fleet.kill(&victim);
    let e = deploy::deploy(ix.clone(), &fleet.map, &intents2, &opts)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("1 of 20 switches failed") && e.contains(&format!("switch {victim} ")),
        "{e}"
    );
    fleet.restart(&victim);
    let r = deploy::deploy(ix.clone(), &fleet.map, &intents2, &opts)
        .await
        .unwrap();
    let resynced: Vec<_> = r
        .iter()
        .filter(|r| r.inserts + r.modifies + r.deletes > 0)
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(resynced, vec![victim.clone()]);
    assert_eq!(read_back(&fleet.map, &ix).await, want2);
}
