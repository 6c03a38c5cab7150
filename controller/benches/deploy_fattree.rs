//! Time to deploy a FatTree k=8 (80 reference switches, 128 hosts) from
//! nothing, and to rerun the deploy (read everything back, change nothing).
//!
//!   cargo bench -p intpath-controller --bench deploy_fattree
//! Every switch is a separate `intpath-switch` process on loopback; the plan
//! has one path per switch link (256), so each switch holds 128 routes plus
//! its generator and sink entries: 10,240 routes + 512 probe entries in all.

use intpath_controller::deploy::host_routes;
use intpath_controller::deploy::{self, DeployOptions, SinkMode};
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_core::topo::Topology;
use std::sync::Arc;
use std::time::Instant;

const RUNS: usize = 3;

use intpath_test_support::switch::Fleet;

fn link_plan(topo: &Topology) -> Plan {
    Plan {
        topology: "fattree:k=8".into(),
        algo: "one-per-link".into(),
        paths: topo
            .switch_links()
            .enumerate()
            .map(|(i, l)| ProbePath {
                id: i as u16,
                nodes: vec![l.a.as_str().into(), l.b.as_str().into()],
                egress_ports: vec![l.a_port],
            })
            .collect(),
        stats: PlanStats::default(),
    }
}

#[tokio::main]
async fn main() {
    let topo = Topology::load("fattree:k=8").expect("fattree");
    let ix = Arc::new(intpath_sr_int::p4info().expect("built-in P4Info"));
    let plan = link_plan(&topo);
    let opts = DeployOptions::default();
    let mut fresh = Vec::new();
    let mut rerun = Vec::new();
    let mut written = 0;
    for _ in 0..RUNS {
        let fleet = Fleet::start(
            topo.switches()
                .iter()
                .map(|s| (s.name.clone(), u64::from(s.id))),
        );
        let map = fleet.map.clone();
        let t = Instant::now();
        let intents =
            deploy::intents(&plan, &map, host_routes(&topo), SinkMode::Collector).expect("intents");
        let r = deploy::deploy(ix.clone(), &map, &intents, &opts)
            .await
            .expect("deploy");
        fresh.push(t.elapsed().as_secs_f64());
        written = r.iter().map(|r| r.inserts + r.modifies).sum::<usize>();
        let t = Instant::now();
        let r = deploy::deploy(ix.clone(), &map, &intents, &opts)
            .await
            .expect("rerun");
        rerun.push(t.elapsed().as_secs_f64());
        assert!(r.iter().all(|r| r.inserts + r.modifies + r.deletes == 0));
        drop(fleet);
    }
    fresh.sort_by(f64::total_cmp);
    rerun.sort_by(f64::total_cmp);
    println!(
        "FatTree k=8: {} switches, {written} entries; deploy from nothing: median {:.0} ms \
         (min {:.0}); no-op rerun: median {:.0} ms (of {RUNS} runs)",
        topo.switches().len(),
        fresh[RUNS / 2] * 1e3,
        fresh[0] * 1e3,
        rerun[RUNS / 2] * 1e3
    );
}
