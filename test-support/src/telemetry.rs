//! A telemetry database filled by the collector's real pipeline: a line of
//! four switches, two probe paths, a congested link, a lossy path and a
//! duplicate. What the store's queries, the heatmaps and the `intpath query`
//! and `heatmap` commands are tested on, in every crate that reads the store.

use intpath_collector::capture::{Collector, Options, Summary};
use intpath_collector::synth::{finished_probe, Conditions};
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_core::wire::ProbeRepr;
use intpath_store::links::{Cable, LinkMap};
use intpath_store::{Db, Store, StoreMode};
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
        nodes: nodes.iter().map(|&n| n.into()).collect(),
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
    probes_queueing(links, plan, n, 1)
}

/// [`probes`] with every queue but the hot link's empty: idle links, which
/// no ranking may call hot.
pub fn idle_frames() -> Vec<Vec<u8>> {
    probes_queueing(&line4(), &plan(), 200, 0)
        .iter()
        .map(|p| p.to_bytes().unwrap())
        .collect()
}

/// [`probes`] with `others` packets in every queue but the hot link's.
fn probes_queueing(links: &LinkMap, plan: &Plan, n: u32, others: u32) -> Vec<ProbeRepr> {
    let hot = hot_link(links);
    let mut out = Vec::new();
    for seq in 0..n {
        let send_ns = BASE_NS + u64::from(seq) * 10_000_000;
        let busy = seq < 100;
        let qdepth = move |l: u32| if l == hot && busy { 40 } else { others };
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

/// [`probes`] (200 per path) as frames, path 2 losing sequence numbers
/// 150..160 and path 1 delivering sequence 7 twice: 391 frames.
pub fn lossy_frames() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for p in probes(&line4(), &plan(), 200) {
        let seq = p.payload.sequence;
        if p.payload.path_id == 2 && (150..160).contains(&seq) {
            continue;
        }
        let bytes = p.to_bytes().unwrap();
        if p.payload.path_id == 1 && seq == 7 {
            out.push(bytes.clone());
        }
        out.push(bytes);
    }
    out
}

/// Writer options for replaying [`probes`]: their send times lie in 2023, so
/// the send-time window (`hostile.rs` tests it) is off.
pub fn options() -> Options {
    Options {
        bucket: Duration::from_millis(100),
        flush_every: Duration::from_millis(50),
        plausible: intpath_collector::Plausibility::any_time(),
        ..Options::default()
    }
}

/// Runs the real collector pipeline over `frames` into a new database.
pub async fn collect_frames(db: impl Into<Db>, frames: &[Vec<u8>]) -> Summary {
    collect_frames_storing(db, frames, StoreMode::Raw).await
}

/// [`collect_frames`] keeping the raw rows `mode` says.
pub async fn collect_frames_storing(
    db: impl Into<Db>,
    frames: &[Vec<u8>],
    mode: StoreMode,
) -> Summary {
    let links = Arc::new(line4());
    let store = Store::open(db).await.unwrap();
    let opts = Options {
        store: mode,
        ..options()
    };
    let c = Collector::start(store, links, &plan(), opts).await.unwrap();
    let intake = c.intake();
    for f in frames {
        let _ = intake.submit_frame(f).await;
    }
    drop(intake);
    c.shutdown().await.unwrap()
}

/// `db` (a path or a `postgres://` URL, as `on_both_backends!` hands out)
/// filled with [`lossy_frames`]: path 1 delivers 201 probes (sequence 7
/// twice), path 2 190 (150..160 lost).
pub async fn lossy_db(db: String) -> Db {
    let db: Db = db.parse().expect("a database name");
    let s = collect_frames(&db, &lossy_frames()).await;
    assert_eq!(s.probes, 391);
    db
}

/// A database of its own for `mode`, on the backend of `base` (what
/// `on_both_backends!` handed the test: a sibling file, or a fresh database
/// on the test server), filled with [`lossy_frames`] keeping the raw rows
/// `mode` says.
pub async fn mode_db(base: &str, mode: StoreMode) -> Db {
    let name = mode.to_string().replace(':', "_");
    let db: Db = match base.parse().expect("a database name") {
        Db::Sqlite(path) => Db::Sqlite(path.with_file_name(format!("{name}.db"))),
        Db::Postgres(_) => {
            Db::Postgres(crate::postgres::fresh_database(&format!("mode_{name}")).await)
        }
    };
    let s = collect_frames_storing(&db, &lossy_frames(), mode).await;
    assert_eq!((s.probes, s.hops), (391, 391 * 4), "{mode}: {s:?}");
    db
}

/// Send times no probe can have: the epoch, 2001 and the end of `u64` time.
pub const ABSURD: [u64; 3] = [0, 1_000_000_000_000_000_000, u64::MAX];

/// Probe `seq` of `path` on [`line4`]/[`plan`], sent `send_ns`; the queue
/// onto link `l` holds `3 + l` packets.
pub fn line_probe(path: usize, seq: u32, send_ns: u64) -> ProbeRepr {
    let q = |l: u32| 3 + l;
    finished_probe(
        &plan().paths[path],
        &line4(),
        &Conditions {
            sequence: seq,
            send_ns,
            qdepth: &q,
            sink_port: 3,
        },
    )
}

/// `topologies/example-backbone.graphml`: ten switches the file labels
/// with city names (s1 "Northport", s2 "Eastfield", …), no hosts.
pub fn backbone() -> intpath_core::topo::Topology {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../topologies/example-backbone.graphml"
    );
    intpath_core::topo::Topology::load(file).unwrap()
}

/// `db` filled by the collector over [`backbone`]: one path s1 → s2 → s3,
/// 100 probes, every queue on it holding 5 packets.
pub async fn labelled_db(db: String) -> Db {
    let topo = backbone();
    let links = Arc::new(LinkMap::from_topology(&topo));
    let port = |a: &str, b: &str| topo.neighbours(a).find(|n| n.1 == b).unwrap().0;
    let path = ProbePath {
        id: 1,
        nodes: ["s1", "s2", "s3"].map(Into::into).to_vec(),
        egress_ports: vec![port("s1", "s2"), port("s2", "s3")],
    };
    let plan = Plan {
        topology: topo.origin().to_owned(),
        algo: "test".into(),
        paths: vec![path.clone()],
        stats: PlanStats::default(),
    };
    let frames: Vec<Vec<u8>> = (0..100)
        .map(|seq| {
            let p = finished_probe(
                &path,
                &links,
                &Conditions {
                    sequence: seq,
                    send_ns: BASE_NS + u64::from(seq) * 10_000_000,
                    qdepth: &|_| 5,
                    sink_port: port("s3", "s4"),
                },
            );
            p.to_bytes().unwrap()
        })
        .collect();
    let db: Db = db.parse().expect("a database name");
    let store = Store::open(&db).await.unwrap();
    let c = Collector::start(store, links, &plan, options())
        .await
        .unwrap();
    let intake = c.intake();
    for f in &frames {
        let _ = intake.submit_frame(f).await;
    }
    drop(intake);
    let s = c.shutdown().await.unwrap();
    assert_eq!(s.probes, 100, "{s:?}");
    db
}
