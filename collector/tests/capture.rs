//! Probes into SQLite through the real sources: a veth pair between network
//! namespaces (root only: ignored unless run with `--include-ignored`) and
//! a UDP socket, with a malformed-probe corpus.

mod common;

use common::*;
use intpath_collector::capture::Collector;
use intpath_collector::synth::udp_payload;
use intpath_collector::Reject;
use intpath_core::wire::ProbeRepr;
use intpath_store::query::{self, RunInfo};
use intpath_store::Db;
use intpath_store::Store;
use intpath_test_support::netns::Netns;
use intpath_test_support::on_both_backends;
use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;

fn rejects_in(db_rows: Vec<(String, i64)>) -> HashMap<String, i64> {
    db_rows.into_iter().collect()
}

async fn stored(db: impl Into<Db>) -> (i64, i64, HashMap<String, i64>) {
    let store = Store::open_existing(db).await.unwrap();
    let run = RunInfo::load(&store, None).await.unwrap();
    let listed = query::runs(&store).await.unwrap();
    let this = listed.iter().find(|r| r.run == run.id).unwrap();
    let (probes, hops) = (this.probes, this.hops);
    let rejects = rejects_in(query::rejects(&store, &run).await.unwrap());
    store.close().await;
    (probes, hops, rejects)
}

/// Malformed and inconsistent UDP payloads, each with the reason it must be
/// counted under.
fn corpus(good: &ProbeRepr) -> Vec<(Vec<u8>, Reject)> {
    let body = udp_payload(good);
    let mut out = Vec::new();
    out.push((Vec::new(), Reject::Truncated));
    out.push((body[..body.len() - 20].to_vec(), Reject::Truncated));
    out.push((body[..30].to_vec(), Reject::Truncated));
    // SR at 0..4, INT header at 4..8 (no labels left).
    let mut b = body.clone();
    b[4] = 46; // hop count over MAX_HOPS
    out.push((b, Reject::Oversized));
    let mut b = body.clone();
    b[2] = 200; // label count over MAX_HOPS
    out.push((b, Reject::Oversized));
    let mut b = body.clone();
    b[6] = 7; // record size
    out.push((b, Reject::Malformed));
    out.push((vec![0xa5; 64], Reject::Oversized));
    let mut b = body.clone();
    b.extend_from_slice(&[0; 8]);
    out.push((b, Reject::TrailingBytes));
    let mut p = good.clone();
    p.sr.flags = 0;
    out.push((udp_payload(&p), Reject::Unfinished));
    let mut p = good.clone();
    p.sr.labels = vec![2];
    out.push((udp_payload(&p), Reject::Unfinished));
    let mut p = good.clone();
    p.payload.path_id = 2;
    out.push((udp_payload(&p), Reject::PathIdMismatch));
    let mut p = good.clone();
    p.sr.path_id = 9;
    p.payload.path_id = 9;
    out.push((udp_payload(&p), Reject::UnknownPath));
    let mut p = good.clone();
    p.int.records.pop();
    out.push((udp_payload(&p), Reject::WrongHopCount));
    let mut p = good.clone();
    p.int.records[1].switch_id = 77;
    out.push((udp_payload(&p), Reject::OffPath));
    let mut p = good.clone();
    p.int.records[2].egress_port = 1;
    out.push((udp_payload(&p), Reject::OffPath));
    out
}

on_both_backends!(udp_probes_and_malformed_corpus_are_stored_and_counted);

async fn udp_probes_and_malformed_corpus_are_stored_and_counted(db: String) {
    let db: Db = db.parse().unwrap();
    let links = line4();
    let plan = plan();
    let good = probes(&links, &plan, 50);
    let store = Store::open(&db).await.unwrap();
    let mut c = Collector::start(store, Arc::new(links), &plan, options())
        .await
        .unwrap();
    let addr = c.listen_udp("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let bad = corpus(&good[0]);
    let mut expected: HashMap<String, i64> = HashMap::new();
    for (b, reason) in &bad {
        *expected.entry(reason.name().to_string()).or_default() += 1;
        sock.send_to(b, addr).unwrap();
    }
    for p in &good {
        sock.send_to(&udp_payload(p), addr).unwrap();
        // Loopback drops datagrams when the receive buffer fills.
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let summary = c.shutdown().await.unwrap();
    assert_eq!(summary.probes, 100);
    assert_eq!(summary.hops, 400);
    let (probes, hops, rejects) = stored(&db).await;
    assert_eq!((probes, hops), (100, 400));
    assert_eq!(rejects, expected);
}

fn sh(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sends length-prefixed frames from `file` out of `iface` inside `ns`, paced.
const SENDER: &str = r#"
import socket, struct, sys, time
ns_iface, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ns_iface, 0))
data = open(path, 'rb').read()
i = 0
while i < len(data):
    n = struct.unpack('>H', data[i:i + 2])[0]
    s.send(data[i + 2:i + 2 + n])
    i += 2 + n
    time.sleep(0.0005)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs root"]
async fn probes_over_veth_reach_sqlite() {
    let pid = std::process::id();
    let (tx_if, rx_if) = (format!("ipcol-t{pid}"), format!("ipcol-r{pid}"));
    let net = Netns::new("ipcol");
    net.veth_out(&tx_if, &rx_if);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("veth.db");
    let links = line4();
    let plan = plan();
    let good = probes(&links, &plan, 100);
    let mut frames: Vec<Vec<u8>> = good.iter().map(|p| p.to_bytes().unwrap()).collect();
    // A truncated probe, an unknown path and an unfinished one ride along.
    let cut = good[0].to_bytes().unwrap();
    frames.push(cut[..cut.len() - 40].to_vec());
    let mut p = good[1].clone();
    p.sr.path_id = 42;
    p.payload.path_id = 42;
    frames.push(p.to_bytes().unwrap());
    let mut p = good[2].clone();
    p.sr.flags = 0;
    frames.push(p.to_bytes().unwrap());
    let file = dir.path().join("frames.bin");
    let mut blob = Vec::new();
    for f in &frames {
        blob.extend_from_slice(&(f.len() as u16).to_be_bytes());
        blob.extend_from_slice(f);
    }
    std::fs::write(&file, blob).unwrap();

    let store = Store::open(&db).await.unwrap();
    let mut c = Collector::start(store, Arc::new(links), &plan, options())
        .await
        .unwrap();
    c.capture_iface(&rx_if).unwrap();
    let sent = net
        .cmd("/usr/bin/python3")
        .args(["-c", SENDER, &tx_if])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let summary = c.shutdown().await.unwrap();
    assert_eq!(summary.probes, 200, "{summary:?}");
    let (probes, hops, rejects) = stored(&db).await;
    assert_eq!((probes, hops), (200, 800));
    assert_eq!(rejects.get("truncated"), Some(&1), "{rejects:?}");
    assert_eq!(rejects.get("unknown_path"), Some(&1), "{rejects:?}");
    assert_eq!(rejects.get("unfinished"), Some(&1), "{rejects:?}");
    assert_eq!(rejects.len(), 3, "{rejects:?}");

    // What arrived is what was sent: the hot link's queue in the first second.
    let store = Store::open_existing(&db).await.unwrap();
    let run = RunInfo::load(&store, None).await.unwrap();
    let hot = hot_link(&line4());
    let series = query::link_series(
        &store,
        &run,
        hot,
        query::Metric::Qdepth,
        run.window(None, None).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(series.len(), 10);
    assert!(series.iter().all(|p| p.max == 40.0 && p.samples == 10));
    let paths = query::path_summaries(&store, &run, run.window(None, None).unwrap())
        .await
        .unwrap();
    assert!(
        paths.iter().all(|p| p.probes == 100 && p.lost == 0),
        "{paths:?}"
    );
    store.close().await;
}

on_both_backends!(daemon_stores_everything_buffered_on_sigterm);

/// The daemon keeps probes in memory between flushes; SIGTERM must store them.
async fn daemon_stores_everything_buffered_on_sigterm(db: String) {
    use intpath_collector::synth::{finished_probe, Conditions};

    let (links, plan) = fattree_path();
    let dir = tempfile::tempdir().unwrap();
    let (child, addr) = start_daemon(
        dir.path(),
        &plan,
        &db,
        // The probes replay 2023 send times.
        &["--flush-ms", "600000", "--send-window", "off"],
    );
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let q = |_: u32| 3;
    for seq in 0..300 {
        let c = Conditions {
            sequence: seq,
            send_ns: BASE_NS + u64::from(seq) * 1_000_000,
            qdepth: &q,
            sink_port: 1,
        };
        let p = finished_probe(&plan.paths[0], &links, &c);
        sock.send_to(&udp_payload(&p), &addr).unwrap();
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    sock.send_to(b"garbage", &addr).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    sh(&["kill", "-TERM", &child.id().to_string()]);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}", out.status);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["probes"], 300, "{summary}");
    let (probes, hops, rejects) = stored(db.parse::<Db>().unwrap()).await;
    assert_eq!((probes, hops), (300, 900));
    assert_eq!(rejects.values().sum::<i64>(), 1, "{rejects:?}");
}
