//! The small network of `intpath_test_support::telemetry`, a FatTree path
//! and the collector daemon, and (in `otlp`) OTLP export fixtures, shared by
//! the integration tests.
#![allow(dead_code)] // each test binary uses a different part

pub mod disk;
pub mod otlp;

#[allow(unused_imports)] // as above
pub use intpath_test_support::telemetry::*;

use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_store::LinkMap;
use std::path::Path;

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
            nodes: vec![a.into(), b.into(), c.into()],
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
    let (mut line, mut said) = (String::new(), String::new());
    while !line.contains("listening for UDP probes") {
        line.clear();
        assert!(
            log.read_line(&mut line).unwrap() > 0,
            "collector exited early: {said}"
        );
        said.push_str(&line);
    }
    // Keep reading the log so the collector never blocks on a full pipe,
    // into `dir/collector.log` for tests that look at it.
    let mut file = std::fs::File::create(dir.join("collector.log")).unwrap();
    std::thread::spawn(move || std::io::copy(&mut log, &mut file));
    (child, addr)
}
