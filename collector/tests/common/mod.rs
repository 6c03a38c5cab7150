//! A small network and its plan, shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different part

use intpath_collector::capture::{Collector, Options, Summary};
use intpath_collector::links::{Cable, LinkMap};
use intpath_collector::store::Db;
use intpath_collector::synth::{finished_probe, Conditions};
use intpath_collector::Store;
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_core::wire::ProbeRepr;
use std::sync::Arc;
use std::time::Duration;

/// s1 — s2 — s3 — s4 (port 2 rightwards, port 1 leftwards), collector hosts
/// c1 on s1:3 and c4 on s4:3.
pub fn line4() -> LinkMap {
    let cable = Cable::new;
    LinkMap::new(
        (1..=4).map(|i| (format!("s{i}"), 100 + i)),
        [
            cable("s1", 2, "s2", 1),
            cable("s2", 2, "s3", 1),
            cable("s3", 2, "s4", 1),
            cable("s1", 3, "c1", 0),
            cable("s4", 3, "c4", 0),
        ],
    )
    .unwrap()
}

/// Path 1 goes right, path 2 goes left.
pub fn plan() -> Plan {
    let path = |id, nodes: &[&str], ports: &[u16]| ProbePath {
        id,
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        egress_ports: ports.to_vec(),
    };
    Plan {
        topology: "line:4".into(),
        algo: "test".into(),
        paths: vec![
            path(1, &["s1", "s2", "s3", "s4"], &[2, 2, 2]),
            path(2, &["s4", "s3", "s2", "s1"], &[1, 1, 1]),
        ],
        stats: PlanStats::default(),
    }
}

pub const BASE_NS: u64 = 1_700_000_000_000_000_000;

/// The congested link: s2 towards s3.
pub fn hot_link(links: &LinkMap) -> u32 {
    links.egress_link("s2", 2).unwrap()
}

/// `n` probes per path, 10 ms apart; the hot link holds 40 packets during the
/// first second and every other queue 1.
pub fn probes(links: &LinkMap, plan: &Plan, n: u32) -> Vec<ProbeRepr> {
    let hot = hot_link(links);
    let mut out = Vec::new();
    for seq in 0..n {
        let send_ns = BASE_NS + u64::from(seq) * 10_000_000;
        let busy = seq < 100;
        let qdepth = move |l: u32| if l == hot && busy { 40 } else { 1 };
        for p in &plan.paths {
            out.push(finished_probe(
                p,
                links,
                &Conditions {
                    sequence: seq,
                    send_ns,
                    qdepth: &qdepth,
                    sink_port: 3,
                },
            ));
        }
    }
    out
}

pub fn options() -> Options {
    Options {
        bucket: Duration::from_millis(100),
        flush_every: Duration::from_millis(50),
        ..Options::default()
    }
}

/// Runs the real collector pipeline over `frames` into a new database.
pub async fn collect_frames(db: impl Into<Db>, frames: &[Vec<u8>]) -> Summary {
    let links = Arc::new(line4());
    let store = Store::open(db).await.unwrap();
    let c = Collector::start(store, links, &plan(), options())
        .await
        .unwrap();
    let intake = c.intake();
    for f in frames {
        let _ = intake.submit_frame(f).await;
    }
    drop(intake);
    c.shutdown().await.unwrap()
}
