//! Spans/s the OTLP receiver accepts and stores, over loopback, with the
//! receiver (`intpath-collector receive`, release build) pinned to one core.
//!
//! `cargo bench -p intpath-collector --bench otlp` prints, for protobuf and
//! for JSON bodies, the spans acknowledged per second (each acknowledged
//! span is committed to SQLite) by four concurrent exporters sending 512
//! spans a request, as an SDK's batch processor does; then checks the
//! database holds every acknowledged span.

use intpath_test_support::otlp::{post, wait_for_listener};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value as V, AnyValue, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;
use std::time::{Duration, Instant};

const SPANS_PER_REQUEST: u32 = 512;
const CLIENTS: u32 = 4;

fn kv(key: &str, v: V) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(v) }),
        ..Default::default()
    }
}

/// Request `n` of client `c`: spans with unique ids and four attributes,
/// half of them children.
fn request(c: u32, n: u32) -> ExportTraceServiceRequest {
    let t0 = 1_700_000_000_000_000_000u64 + u64::from(n) * 1_000_000;
    let spans = (0..SPANS_PER_REQUEST)
        .map(|i| {
            let mut trace_id = [0u8; 16];
            trace_id[..4].copy_from_slice(&c.to_be_bytes());
            trace_id[4..8].copy_from_slice(&n.to_be_bytes());
            trace_id[8..12].copy_from_slice(&(i / 2).to_be_bytes());
            trace_id[15] = 1;
            let mut span_id = [1u8; 8];
            span_id[..4].copy_from_slice(&i.to_be_bytes());
            let parent = if i % 2 == 1 {
                let mut p = [1u8; 8];
                p[..4].copy_from_slice(&(i - 1).to_be_bytes());
                p.to_vec()
            } else {
                Vec::new()
            };
            Span {
                trace_id: trace_id.to_vec(),
                span_id: span_id.to_vec(),
                parent_span_id: parent,
                name: "reservation.MakeReservation".into(),
                kind: 2 + (i % 2) as i32,
                start_time_unix_nano: t0 + u64::from(i) * 1_000,
                end_time_unix_nano: t0 + u64::from(i) * 1_000 + 250_000,
                attributes: vec![
                    kv("rpc.system", V::StringValue("grpc".into())),
                    kv("rpc.service", V::StringValue("reservation".into())),
                    kv("net.peer.port", V::IntValue(8087)),
                    kv("retry", V::BoolValue(false)),
                ],
                ..Default::default()
            }
        })
        .collect();
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    kv("service.name", V::StringValue("reservation".into())),
                    kv("host.name", V::StringValue("h7".into())),
                    kv("host.ip", V::StringValue("10.0.0.7".into())),
                ],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// Runs one receiver for `secs` under four exporters; spans/s and file size.
fn measure(json: bool, secs: f64) -> (f64, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("spans.db");
    let addr = intpath_test_support::free_addr();
    let mut child = std::process::Command::new("taskset")
        .args([
            "-c",
            "0",
            env!("CARGO_BIN_EXE_intpath-collector"),
            "receive",
        ])
        .arg("--db")
        .arg(&db)
        .args(["--otlp-listen", &addr])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("receiver starts");
    assert!(wait_for_listener(&addr, Duration::from_secs(20)));
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (acked, elapsed) = rt.block_on(async {
        let client = reqwest::Client::new();
        let start = Instant::now();
        let until = start + Duration::from_secs_f64(secs);
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (client, addr) = (client.clone(), addr.clone());
                tokio::spawn(async move {
                    let mut acked = 0u64;
                    let mut n = 0;
                    while Instant::now() < until {
                        let req = request(c, n);
                        let (ct, body) = match json {
                            true => ("application/json", serde_json::to_vec(&req).expect("JSON")),
                            false => ("application/x-protobuf", req.encode_to_vec()),
                        };
                        let a = post(&client, &addr, ct, None, body).await.expect("export");
                        assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
                        acked += u64::from(SPANS_PER_REQUEST);
                        n += 1;
                    }
                    acked
                })
            })
            .collect();
        let mut acked = 0;
        for t in tasks {
            acked += t.await.expect("client");
        }
        (acked, start.elapsed())
    });
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    assert!(child.wait().expect("receiver exits").success());
    let stored: i64 = rt.block_on(async {
        let url = format!("sqlite://{}", db.display());
        let pool = sqlx::SqlitePool::connect(&url).await.expect("db");
        sqlx::query_scalar("SELECT COUNT(*) FROM spans")
            .fetch_one(&pool)
            .await
            .expect("count")
    });
    assert_eq!(stored as u64, acked, "every acknowledged span is stored");
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    (acked as f64 / elapsed.as_secs_f64(), size)
}

fn main() {
    // `cargo test --benches` runs bench binaries with no `--bench`: keep it short.
    let secs = if std::env::args().any(|a| a == "--bench") {
        5.0
    } else {
        0.5
    };
    for (name, json) in [("protobuf", false), ("JSON", true)] {
        let (rate, size) = measure(json, secs);
        println!(
            "OTLP/HTTP {name}: {:.0} k spans/s stored (receiver on one core), {:.0} MB file",
            rate / 1e3,
            size as f64 / 1e6
        );
    }
}
