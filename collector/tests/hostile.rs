//! Hostile probes: absurd send times, IPv4 options and fragments, flipped
//! bits, and databases that already hold garbage from an older collector.
//! None may crash anything or reach the statistics.

mod common;

use common::{collect_frames, fattree_path, line4, plan, start_daemon};
use intpath_collector::capture::{Collector, Options};
use intpath_collector::parse::{now_ns, parse_frame};
use intpath_collector::plausible::{DEFAULT_SEND_WINDOW, QDEPTH_LIMIT};
use intpath_collector::synth::{finished_probe, udp_payload, Conditions};
use intpath_collector::{Probe, Store, Validator};
use intpath_core::wire::{EthernetFrame, Ipv4Packet, ProbeRepr, ETHERNET_HEADER_LEN};
use intpath_test_support::rng::Rng;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

const ABSURD: [u64; 3] = [0, 1_000_000_000_000_000_000, u64::MAX];

/// Probe `seq` of `path` on [`line4`]/[`plan`], sent `send_ns`.
fn line_probe(path: usize, seq: u32, send_ns: u64) -> ProbeRepr {
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
    // Ten seconds and one nanosecond late, and early.
    send(
        103,
        now_ns() - DEFAULT_SEND_WINDOW.as_nanos() as u64 - 1_000_000,
    );
    send(
        104,
        now_ns() + DEFAULT_SEND_WINDOW.as_nanos() as u64 + 1_000_000,
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
    let stored = query_json(&db, &["rejects"]);
    assert_eq!(
        stored,
        serde_json::json!([{"reason": "send_time", "count": 5}])
    );
}

/// `intpath-collector query --format json ARGS` on `db`.
fn query_json(db: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["query", "--format", "json", "--db"])
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
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

/// 100 good probes per path, then rows for absurd send times written
/// straight into the tables, as a collector without validation stored them.
async fn database_with_garbage(db: &Path) {
    // A second of probes, the last sent a second before they are collected.
    let t0 = now_ns() - 2_000_000_000;
    let frames: Vec<Vec<u8>> = (0..100)
        .flat_map(|seq| {
            (0..2).map(move |p| {
                line_probe(p, seq, t0 + u64::from(seq) * 10_000_000)
                    .to_bytes()
                    .unwrap()
            })
        })
        .collect();
    collect_frames(db, &frames).await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let bucket_ns = 100_000_000i64;
    for (i, t) in ABSURD.into_iter().enumerate() {
        let send = t as i64;
        let recv = t0 as i64;
        let bucket = send.div_euclid(bucket_ns);
        sqlx::query("UPDATE runs SET first_ns = MIN(first_ns, $1)")
            .bind(send)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO probes (run_id, path_id, seq, send_ns, recv_ns, e2e_ns, hops) \
             VALUES (1, 1, $1, $2, $3, $4, 4)",
        )
        .bind(1000 + i as i64)
        .bind(send)
        .bind(recv)
        .bind(recv.wrapping_sub(send))
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query("INSERT INTO path_buckets VALUES (1, 1, $1, 1, 999000, 0, 0, $2, $2)")
            .bind(bucket)
            .bind(recv.wrapping_sub(send))
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO link_buckets SELECT run_id, link_id, $1, 1, 9, 9, 9, 9, 9, 9 FROM link_buckets WHERE run_id = 1 LIMIT 1")
            .bind(bucket)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
}

/// `intpath-collector heatmap --db DB --out PNG timeline ARGS`.
fn timeline(db: &Path, png: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["heatmap", "--db"])
        .arg(db)
        .arg("--out")
        .arg(png)
        .arg("timeline")
        .args(args)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_holding_absurd_rows_still_answers_and_draws() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    database_with_garbage(&db).await;
    let png = dir.path().join("t.png");
    let out = timeline(&db, &png, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {err}", out.status);
    assert!(png.metadata().unwrap().len() > 0);
    assert!(err.contains("ignored"), "the garbage is reported: {err}");
    // Two seconds of data: about twenty columns, not decades of them.
    let img = image::open(&png).unwrap();
    assert!(img.width() < 2000, "{}", img.width());

    let paths = query_json(&db, &["paths"]);
    for p in paths.as_array().unwrap() {
        assert_eq!(p["probes"], 100, "{p}");
        assert_eq!(p["lost"], 0, "{p}");
        assert!(p["e2e_mean_us"].as_f64().unwrap() >= 0.0, "{p}");
    }
    // An explicit absurd range stays clamped to the run.
    for range in [["--from=-1e8"], ["--to=1e8"]] {
        let out = timeline(&db, &png, &range);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{range:?}: {:?} {err}", out.status);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeline_over_a_long_range_merges_buckets_into_bounded_columns() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let t0 = now_ns() - 2_000_000_000;
    let frames: Vec<Vec<u8>> = (0..100)
        .map(|seq| {
            line_probe(0, seq, t0 + u64::from(seq) * 10_000_000)
                .to_bytes()
                .unwrap()
        })
        .collect();
    collect_frames(&db, &frames).await;
    let png = dir.path().join("t.png");
    // A day of 100 ms buckets: 864,000 of them, 44 to a column.
    let out = timeline(&db, &png, &["--to=86400"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?} {err}", out.status);
    assert!(err.contains("44 buckets per column"), "{err}");
    let img = image::open(&png).unwrap();
    let cols = intpath_collector::heatmap::MAX_TIMELINE_COLUMNS as u32;
    assert!(
        img.width() > cols / 2 && img.width() < cols + 1000,
        "{}",
        img.width()
    );
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
