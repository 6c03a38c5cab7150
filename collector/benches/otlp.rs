//! Spans/s the OTLP receiver accepts and stores, over loopback, with the
//! receiver (`intpath-collector receive`, release build) pinned to core 0
//! and the exporters to core 1.
//!
//! `cargo bench -p intpath-collector --bench otlp` prints, for protobuf and
//! for JSON bodies, the spans acknowledged per second (each acknowledged
//! span is committed to SQLite) by four concurrent exporters sending 512
//! spans a request, as an SDK's batch processor does; then checks the
//! database holds every acknowledged span.
//!
//! Two variables make it a before/after comparison that a shared machine
//! cannot spoil:
//! - `OTLP_BENCH_BASELINE=/path/to/older/intpath-collector` measures that
//!   binary too, alternating with this one, side by side in one run;
//! - `OTLP_BENCH_CALLGRIND=DIR` runs each receiver under valgrind's
//!   callgrind for a fixed number of spans and reports instructions per span
//!   (net of an empty run's start-up and shutdown), a count other load on
//!   the machine does not change; the profiles stay in DIR for
//!   `callgrind_annotate`.

use intpath_test_support::otlp::{post, wait_for_listener};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value as V, AnyValue, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;
use std::path::{Path, PathBuf};
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

/// How the exporters load a receiver.
#[derive(Clone, Copy)]
enum Load {
    /// Back to back for this many seconds.
    For(Duration),
    /// This many requests per exporter.
    Requests(u32),
}

/// What one receiver run gave.
struct Run {
    spans: u64,
    elapsed: Duration,
    file_bytes: u64,
    /// Instructions the receiver executed (under callgrind).
    instructions: Option<u64>,
}

/// Runs `bin` as a receiver under `load`, then checks every acknowledged
/// span is stored.
fn measure(bin: &Path, json: bool, load: Load, profile: Option<&Path>) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("spans.db");
    let addr = intpath_test_support::free_addr();
    let mut cmd = if let Some(profile) = profile {
        let mut c = std::process::Command::new("valgrind");
        c.arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", profile.display()))
            .arg(bin);
        c
    } else {
        let mut c = std::process::Command::new("taskset");
        c.args(["-c", "0"]).arg(bin);
        c
    };
    let mut child = cmd
        .arg("receive")
        .arg("--db")
        .arg(&db)
        .args(["--otlp-listen", &addr])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("receiver starts");
    assert!(wait_for_listener(&addr, Duration::from_secs(60)));
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (acked, elapsed) = rt.block_on(async {
        let client = reqwest::Client::new();
        let start = Instant::now();
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (client, addr) = (client.clone(), addr.clone());
                tokio::spawn(async move {
                    let mut acked = 0u64;
                    let mut n = 0;
                    while match load {
                        Load::For(d) => start.elapsed() < d,
                        Load::Requests(r) => n < r,
                    } {
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
    Run {
        spans: acked,
        elapsed,
        file_bytes: std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0),
        instructions: profile.map(callgrind_total),
    }
}

/// The instruction total callgrind wrote for the whole run.
fn callgrind_total(profile: &Path) -> u64 {
    let text = std::fs::read_to_string(profile).expect("callgrind output");
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .expect("callgrind totals line")
}

fn main() {
    // The exporters (this process) keep off the receiver's core: it is to
    // be measured alone on core 0.
    let pinned = std::process::Command::new("taskset")
        .args(["-a", "-p", "-c", "1", &std::process::id().to_string()])
        .stdout(std::process::Stdio::null())
        .status();
    assert!(
        pinned.is_ok_and(|s| s.success()),
        "taskset pins the exporters to core 1"
    );
    // `cargo test --benches` runs bench binaries with no `--bench`: keep it short.
    let bench = std::env::args().any(|a| a == "--bench");
    let profiles = std::env::var_os("OTLP_BENCH_CALLGRIND").map(PathBuf::from);
    if let Some(d) = &profiles {
        std::fs::create_dir_all(d).expect("callgrind output directory");
    }
    let callgrind = profiles.is_some();
    let load = match (callgrind, bench) {
        (true, _) => Load::Requests(if bench { 10 } else { 2 }),
        (false, true) => Load::For(Duration::from_secs(5)),
        (false, false) => Load::For(Duration::from_millis(500)),
    };
    let this = PathBuf::from(env!("CARGO_BIN_EXE_intpath-collector"));
    let mut bins = vec![("this build", this)];
    if let Some(old) = std::env::var_os("OTLP_BENCH_BASELINE") {
        bins.insert(0, ("baseline", PathBuf::from(old)));
    }
    for (name, json) in [("protobuf", false), ("JSON", true)] {
        for (which, bin) in &bins {
            let profile = |what: &str| {
                let file = format!("callgrind.{}.{name}.{what}.out", which.replace(' ', "-"));
                profiles.as_ref().map(|d| d.join(file))
            };
            let run = measure(bin, json, load, profile("load").as_deref());
            let per_span = run.instructions.map(|total| {
                let idle = measure(bin, json, Load::Requests(0), profile("idle").as_deref());
                let idle = idle.instructions.unwrap_or_default();
                total.saturating_sub(idle) as f64 / run.spans as f64
            });
            let rate = run.spans as f64 / run.elapsed.as_secs_f64();
            let cost = per_span
                .map(|i| format!(", {:.0} k instructions/span", i / 1e3))
                .unwrap_or_default();
            println!(
                "OTLP/HTTP {name} ({which}): {:.1} k spans/s stored{}{cost}, {:.0} MB file",
                rate / 1e3,
                if callgrind {
                    " under callgrind"
                } else {
                    " (receiver on one core)"
                },
                run.file_bytes as f64 / 1e6
            );
        }
    }
}
