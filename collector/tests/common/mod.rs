//! A small network and its plan, and (in `otlp`) OTLP export fixtures,
//! shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different part

pub mod otlp;

use intpath_collector::capture::{Collector, Options, Summary};
use intpath_collector::ingest::StoreMode;
use intpath_collector::links::{Cable, LinkMap};
use intpath_collector::store::Db;
use intpath_collector::synth::{finished_probe, Conditions};
use intpath_collector::Store;
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_core::wire::ProbeRepr;
use std::path::Path;
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

pub const FATTREE: &str = "fattree:k=4";

/// A plan of one path (id 5) two switch hops up from the first switch link
/// of [`FATTREE`], and the fabric's links.
pub fn fattree_path() -> (LinkMap, Plan) {
    let topo = intpath_core::topo::Topology::load(FATTREE).unwrap();
    let links = LinkMap::from_topology(&topo);
    // Two hops up from the first switch link: a -> b -> c.
    let l1 = topo.switch_links().next().unwrap();
    let (a, b) = (&l1.a, &l1.b);
    let l2 = topo
        .switch_links()
        .find(|l| (l.a == *b && l.b != *a) || (l.b == *b && l.a != *a))
        .unwrap();
    let (b_port, c) = if l2.a == *b {
        (l2.a_port, &l2.b)
    } else {
        (l2.b_port, &l2.a)
    };
    let plan = Plan {
        topology: FATTREE.into(),
        algo: "test".into(),
        paths: vec![ProbePath {
            id: 5,
            nodes: vec![a.clone(), b.clone(), c.clone()],
            egress_ports: vec![l1.a_port, b_port],
        }],
        stats: PlanStats::default(),
    };
    (links, plan)
}

/// Starts `intpath-collector collect` on [`FATTREE`] and `plan` (written
/// into `dir`), receiving UDP probes on a free loopback port, with `extra`
/// flags; returns once it listens, with the address to send to. The rest of
/// its log goes to `dir/collector.log`.
pub fn start_daemon(
    dir: &Path,
    plan: &Plan,
    db: impl AsRef<std::ffi::OsStr>,
    extra: &[&str],
) -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    let plan_file = dir.join("plan.json");
    std::fs::write(&plan_file, serde_json::to_string(plan).unwrap()).unwrap();
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["collect", "--udp", &addr, "--topo", FATTREE])
        .args(extra)
        .arg("--plan")
        .arg(&plan_file)
        .arg("--db")
        .arg(db)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening for UDP probes") {
        line.clear();
        assert!(
            log.read_line(&mut line).unwrap() > 0,
            "collector exited early"
        );
    }
    // Keep reading the log so the collector never blocks on a full pipe,
    // into `dir/collector.log` for tests that look at it.
    let mut file = std::fs::File::create(dir.join("collector.log")).unwrap();
    std::thread::spawn(move || std::io::copy(&mut log, &mut file));
    (child, addr)
}
