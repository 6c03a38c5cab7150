//! For the workload's tests and benchmark: the six services as real
//! processes on loopback, and a minimal OTLP/HTTP trace sink that decodes
//! what they export with `opentelemetry-proto`'s types. (The collector's own
//! receiver is a separate component; this sink only records.)
#![allow(dead_code)] // each test target uses part of it

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use prost::Message;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_intpath-workload");

/// One received span, flattened with its resource.
#[derive(Debug, Clone)]
pub struct RecSpan {
    pub trace_id: String,
    pub span_id: String,
    pub parent_id: Option<String>,
    pub service: String,
    pub host_ip: String,
    pub name: String,
    /// OTLP `SpanKind`: 2 server, 3 client.
    pub kind: i32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attrs: HashMap<String, String>,
}

impl RecSpan {
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.end_ns.saturating_sub(self.start_ns))
    }
    pub fn attr(&self, k: &str) -> Option<&str> {
        self.attrs.get(k).map(String::as_str)
    }
}

fn flat(attrs: &[KeyValue]) -> HashMap<String, String> {
    attrs
        .iter()
        .filter_map(|kv| {
            let v = match kv.value.as_ref()?.value.as_ref()? {
                Value::StringValue(s) => s.clone(),
                Value::IntValue(i) => i.to_string(),
                Value::BoolValue(b) => b.to_string(),
                Value::DoubleValue(d) => d.to_string(),
                _ => return None,
            };
            Some((kv.key.clone(), v))
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

type Store = Arc<Mutex<Vec<RecSpan>>>;

async fn accept(State(store): State<Store>, body: Bytes) -> (StatusCode, Vec<u8>) {
    let Ok(req) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, Vec::new());
    };
    let mut got = Vec::new();
    for rs in req.resource_spans {
        let res = flat(&rs.resource.map(|r| r.attributes).unwrap_or_default());
        for span in rs.scope_spans.into_iter().flat_map(|s| s.spans) {
            got.push(RecSpan {
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_id: (!span.parent_span_id.is_empty()).then(|| hex(&span.parent_span_id)),
                service: res.get("service.name").cloned().unwrap_or_default(),
                host_ip: res.get("host.ip").cloned().unwrap_or_default(),
                name: span.name,
                kind: span.kind,
                start_ns: span.start_time_unix_nano,
                end_ns: span.end_time_unix_nano,
                attrs: flat(&span.attributes),
            });
        }
    }
    store.lock().unwrap().extend(got);
    (
        StatusCode::OK,
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
}

/// An OTLP/HTTP endpoint on a free loopback port, served by its own thread.
pub struct Sink {
    pub addr: SocketAddr,
    store: Store,
}

impl Sink {
    pub fn start() -> Sink {
        let store = Store::default();
        let app = axum::Router::new()
            .route("/v1/traces", post(accept))
            .with_state(store.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(l, app).await.unwrap();
            });
        });
        Sink { addr, store }
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn spans(&self) -> Vec<RecSpan> {
        self.store.lock().unwrap().clone()
    }

    pub fn clear(&self) {
        self.store.lock().unwrap().clear();
    }
}

/// One running service process.
pub struct Proc {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Proc {
    fn spawn(args: &[String]) -> Proc {
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn intpath-workload");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .parse()
            .unwrap();
        Proc { child, addr }
    }

    /// SIGTERM, then wait: the service flushes its spans before it exits.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.child.wait().unwrap()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// All six services, callees first so each caller is given their ports.
pub struct Hotel {
    pub procs: Vec<(&'static str, Proc)>,
}

impl Hotel {
    /// `common`: flags for every service; `extra`: flags for one service.
    pub fn start(common: &[&str], extra: &[(&str, &[&str])]) -> Hotel {
        let mut procs: Vec<(&'static str, Proc)> = Vec::new();
        let order: [(&str, &[&str]); 6] = [
            ("geo", &[]),
            ("rate", &[]),
            ("profile", &[]),
            ("reservation", &[]),
            ("search", &["geo", "rate"]),
            ("frontend", &["search", "profile", "reservation"]),
        ];
        for (name, callees) in order {
            let peers: Vec<String> = callees
                .iter()
                .map(|c| {
                    let p = &procs.iter().find(|(n, _)| n == c).unwrap().1;
                    format!("{c}={}", p.addr)
                })
                .collect();
            let mut args: Vec<String> = vec!["--service".into(), name.into()];
            args.extend(common.iter().map(|s| s.to_string()));
            if !peers.is_empty() {
                args.extend(["--peers".into(), peers.join(",")]);
            }
            for (svc, flags) in extra {
                if *svc == name {
                    args.extend(flags.iter().map(|s| s.to_string()));
                }
            }
            procs.push((name, Proc::spawn(&args)));
        }
        Hotel { procs }
    }

    pub fn addr(&self, name: &str) -> SocketAddr {
        self.procs.iter().find(|(n, _)| *n == name).unwrap().1.addr
    }

    pub fn pids(&self) -> Vec<u32> {
        self.procs.iter().map(|(_, p)| p.child.id()).collect()
    }

    /// Stops every service, frontend first, and says how each exited.
    pub fn stop(mut self) -> Vec<(&'static str, std::process::ExitStatus)> {
        self.procs
            .iter_mut()
            .rev()
            .map(|(name, p)| (*name, p.stop()))
            .collect()
    }
}

/// Runs `intpath-workload load --json` against `frontend` and returns its
/// summary.
pub fn load(frontend: SocketAddr, args: &[&str]) -> serde_json::Value {
    let out = Command::new(BIN)
        .args(["load", "--json", "--frontend", &frontend.to_string()])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "load failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Waits until `f` holds or `timeout` passes; returns whether it held.
pub fn eventually(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < timeout {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}
