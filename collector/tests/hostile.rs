//! Hostile probes: absurd send times, IPv4 options and fragments and
//! flipped bits. None may crash anything or reach the statistics (databases
//! that already hold garbage from an older collector:
//! `controller/tests/telemetry_cli.rs`).

mod common;

use common::{collect_frames, fattree_path, line4, line_probe, plan, start_daemon, ABSURD};
use intpath_collector::capture::{Collector, Options};
use intpath_collector::parse::parse_frame;
use intpath_collector::plausible::{DEFAULT_SEND_WINDOW, QDEPTH_LIMIT};
use intpath_collector::synth::{finished_probe, udp_payload, Conditions};
use intpath_collector::{Probe, Validator};
use intpath_core::time::now_ns;
use intpath_core::wire::{EthernetFrame, Ipv4Packet, ETHERNET_HEADER_LEN};
use intpath_store::query::{self, RunInfo};
use intpath_store::Store;
use intpath_test_support::rng::Rng;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

fn rejects(summary: &serde_json::Value) -> HashMap<String, u64> {
    summary["rejects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_owned(), r[1].as_u64().unwrap()))
        .collect()
}

#[test]
fn absurd_send_times_are_rejected_counted_and_exported() {
    let (links, plan) = fattree_path();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let metrics = intpath_test_support::free_addr();
    let (child, addr) = start_daemon(
        dir.path(),
        &plan,
        &db,
        &["--flush-ms", "50", "--metrics-listen", &metrics],
    );
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let q = |_: u32| 2;
    let send = |seq: u32, send_ns: u64| {
        let c = Conditions {
            sequence: seq,
            send_ns,
            qdepth: &q,
            sink_port: 1,
        };
        let p = finished_probe(&plan.paths[0], &links, &c);
        sock.send_to(&udp_payload(&p), &addr).unwrap();
        std::thread::sleep(std::time::Duration::from_micros(300));
    };
    for seq in 0..100 {
        send(seq, now_ns());
    }
    for (i, t) in ABSURD.into_iter().enumerate() {
        send(100 + i as u32, t);
    }
    // A second outside the window, late and early: a loaded machine may
    // take milliseconds to read a probe, which would bring a send time
    // just past the window's future edge back inside it.
    send(
        103,
        now_ns() - DEFAULT_SEND_WINDOW.as_nanos() as u64 - 1_000_000_000,
    );
    send(
        104,
        now_ns() + DEFAULT_SEND_WINDOW.as_nanos() as u64 + 1_000_000_000,
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (_, body) = intpath_test_support::prometheus::http_get(&metrics, "/metrics").unwrap();
    assert!(
        body.contains(r#"intpath_collector_rejected_probes_total{reason="send_time"} 5"#),
        "{body}"
    );
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}", out.status);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["probes"], 100, "{summary}");
    assert_eq!(rejects(&summary), HashMap::from([("send_time".into(), 5)]));
    let stored = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(stored_rejects(&db));
    assert_eq!(stored, [("send_time".to_owned(), 5)]);
}

/// What the store holds as rejected, by reason.
async fn stored_rejects(db: &Path) -> Vec<(String, i64)> {
    let store = Store::open_existing(db).await.unwrap();
    let run = RunInfo::load(&store, None).await.unwrap();
    let rejects = query::rejects(&store, &run).await.unwrap();
    store.close().await;
    rejects
}

/// `frame` with its IPv4 header edited by `edit` (checksum refilled).
fn ip_edited(frame: &[u8], edit: impl FnOnce(&mut Ipv4Packet<&mut [u8]>)) -> Vec<u8> {
    let mut f = frame.to_vec();
    let mut eth = EthernetFrame::new_checked(&mut f[..]).unwrap();
    let mut ip = Ipv4Packet::new_unchecked(eth.payload_mut());
    edit(&mut ip);
    ip.fill_checksum();
    f
}

/// `frame` with four option bytes (NOPs) after its 20-byte IPv4 header.
fn with_options(frame: &[u8]) -> Vec<u8> {
    let at = ETHERNET_HEADER_LEN + 20;
    let mut f = [&frame[..at], &[1u8; 4], &frame[at..]].concat();
    let mut eth = EthernetFrame::new_checked(&mut f[..]).unwrap();
    let mut ip = Ipv4Packet::new_unchecked(eth.payload_mut());
    ip.set_version_header_len(4, 24);
    ip.set_total_len(ip.total_len() + 4);
    ip.fill_checksum();
    f
}

#[tokio::test]
async fn ipv4_options_fragments_and_odd_lengths_are_rejected_like_the_switches_do() {
    let good = line_probe(0, 0, now_ns()).to_bytes().unwrap();
    let bad = [
        (with_options(&good), "ipv4_options"),
        (ip_edited(&good, |ip| ip.set_flags_frag(0x2000)), "fragment"),
        (ip_edited(&good, |ip| ip.set_flags_frag(0x4001)), "fragment"),
        // A padded frame whose IPv4 length counts the padding too.
        (
            ip_edited(&[&good[..], &[0; 8]].concat(), |ip| {
                ip.set_total_len(ip.total_len() + 8)
            }),
            "length_mismatch",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut frames: Vec<Vec<u8>> = bad.iter().map(|(f, _)| f.clone()).collect();
    frames.push(good.clone());
    // Ethernet padding past the IPv4 length is fine.
    frames.push([&line_probe(0, 1, now_ns()).to_bytes().unwrap()[..], &[0; 8]].concat());
    let s = collect_frames(dir.path().join("t.db"), &frames).await;
    assert_eq!(s.probes, 2, "{s:?}");
    let mut want: HashMap<String, u64> = HashMap::new();
    for (_, reason) in &bad {
        *want.entry((*reason).into()).or_default() += 1;
    }
    let got: HashMap<String, u64> = s.rejects.iter().map(|(r, n)| (r.to_string(), *n)).collect();
    assert_eq!(got, want);
}

/// The probe `frame` carries once validated against [`plan`] with the
/// default window, received at `recv_ns`, or `None` when rejected.
fn accepted(v: &Validator, frame: &[u8], recv_ns: u64) -> Option<Probe> {
    let p = parse_frame(frame, recv_ns).ok()?;
    v.check(&p).ok().map(|()| p)
}

/// What a flipped probe that got through may differ in: only numbers no
/// check can pin down, each within what our switches could write. The plan
/// fixes every switch and port but the sink's port towards the collector
/// (record 0's egress port) and the generator's port into the first switch
/// (the last record's ingress port).
fn plausible_change(good: &Probe, got: &Probe) -> bool {
    let window = DEFAULT_SEND_WINDOW.as_nanos() as u64;
    let window_us = window / 1_000;
    let same_shape = got.path_id == good.path_id
        && got.records.len() == good.records.len()
        && got
            .records
            .iter()
            .zip(&good.records)
            .enumerate()
            .all(|(i, (a, b))| {
                a.switch_id == b.switch_id
                    && (i == 0 || a.egress_port == b.egress_port)
                    && (i + 1 == good.records.len() || a.ingress_port == b.ingress_port)
            });
    same_shape
        && got.send_ns.abs_diff(got.recv_ns) <= window
        && got.records.iter().zip(&good.records).all(|(a, b)| {
            a.enq_qdepth < QDEPTH_LIMIT
                && a.egress_ts >= a.ingress_ts
                && a.ingress_ts.abs_diff(b.ingress_ts) <= window_us
                && a.egress_ts.abs_diff(b.egress_ts) <= window_us
                && u64::from(a.deq_timedelta) <= a.egress_ts - a.ingress_ts + 1
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flipped_bits_never_store_impossible_numbers() {
    let recv = now_ns();
    let good_frame = line_probe(0, 7, recv - 50_000).to_bytes().unwrap();
    let v = Validator::new(&plan(), &line4()).unwrap();
    let good = accepted(&v, &good_frame, recv).expect("the original is valid");

    // Every single bit, then 2000 frames with 2 to 9 random bytes replaced.
    let mut inputs = Vec::new();
    for bit in 0..good_frame.len() * 8 {
        let mut f = good_frame.clone();
        f[bit / 8] ^= 1 << (bit % 8);
        inputs.push(("single bit", f));
    }
    let mut rng = Rng(0x1d_2026);
    for _ in 0..2000 {
        let mut f = good_frame.clone();
        for _ in 0..2 + rng.below(8) {
            let at = rng.below(f.len());
            f[at] = rng.next_u64() as u8;
        }
        inputs.push(("random bytes", f));
    }
    let mut tally: HashMap<(&str, &str), usize> = HashMap::new();
    let mut stored_frames = Vec::new();
    for (kind, f) in &inputs {
        let verdict = match accepted(&v, f, recv) {
            None => "rejected",
            Some(p) if p == good => "same meaning",
            Some(p) => {
                assert!(plausible_change(&good, &p), "{kind}: stored garbage {p:?}");
                "plausible change"
            }
        };
        if verdict != "rejected" {
            stored_frames.push(f.clone());
        }
        *tally.entry((kind, verdict)).or_default() += 1;
    }
    let mut lines: Vec<String> = tally
        .iter()
        .map(|((k, v), n)| format!("{k}: {v} {n}"))
        .collect();
    lines.sort();
    println!("{} inputs\n{}", inputs.len(), lines.join("\n"));
    assert!(tally[&("single bit", "rejected")] > 0);

    // The real pipeline stores exactly the accepted ones, none of them
    // outside the window, and survives the rest.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("f.db")).await.unwrap();
    let c = Collector::start(
        store,
        Arc::new(line4()),
        &plan(),
        Options {
            flush_every: std::time::Duration::from_millis(50),
            ..Options::default()
        },
    )
    .await
    .unwrap();
    let intake = c.intake();
    for (_, f) in &inputs {
        let _ = intake.submit_frame(f).await;
    }
    drop(intake);
    let s = c.shutdown().await.unwrap();
    assert_eq!(s.probes as usize, stored_frames.len());
    let pool =
        sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("f.db").display()))
            .await
            .unwrap();
    let (lo, hi): (i64, i64) = sqlx::query_as("SELECT MIN(send_ns), MAX(send_ns) FROM probes")
        .fetch_one(&pool)
        .await
        .unwrap();
    let window = DEFAULT_SEND_WINDOW.as_nanos() as i64;
    assert!(
        lo >= recv as i64 - window && hi <= now_ns() as i64 + window,
        "{lo} {hi}"
    );
    let max_q: i64 = sqlx::query_scalar("SELECT MAX(qdepth_max) FROM link_buckets")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(max_q < i64::from(QDEPTH_LIMIT));
}
