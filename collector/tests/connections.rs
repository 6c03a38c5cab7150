//! Clients that open connections and send nothing, half a header or one
//! request and then wait must not starve the others: every listener closes
//! connections silent past the header timeout and idle past the idle
//! timeout, and at its cap under the file limit closes the oldest idle one
//! for each new one.

mod common;

use common::otlp::{request, start_with, PROTO};
use intpath_collector::otlp::{Config, Receiver};
use intpath_collector::serve::Limits;
use intpath_test_support::otlp::{post, wait_for_listener};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
use prost::Message;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// Waits until the server closes `s` (a read returns 0 or fails); how long
/// after `since` that was, or `None` when it stayed open past `max`.
fn closed_within(mut s: TcpStream, since: Instant, max: Duration) -> Option<Duration> {
    s.set_read_timeout(Some(max)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Some(since.elapsed()),
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::ConnectionReset) => {
                return Some(since.elapsed())
            }
            Err(_) => return None,
        }
    }
}

/// A receiver with these timeouts, and its HTTP and gRPC addresses.
async fn receiver(dir: &Path, header_ms: u64, idle_ms: u64) -> (Receiver, SocketAddr, SocketAddr) {
    let limits = Limits {
        header_timeout: Duration::from_millis(header_ms),
        idle_timeout: Duration::from_millis(idle_ms),
        max_connections: 1000,
    };
    let cfg = Config {
        limits,
        ..Config::default()
    };
    let r = start_with(dir.join(format!("{header_ms}-{idle_ms}.db")), cfg).await;
    let (http, grpc) = (r.local_addr(), r.grpc_addr().unwrap());
    (r, http, grpc)
}

const MAX: Duration = Duration::from_secs(5);

/// Asserts that `closed` came no earlier than `ms` and within [`MAX`].
fn closed_after(what: &str, closed: Option<Duration>, ms: u64) {
    let t = closed.unwrap_or_else(|| panic!("{what}: still open after {MAX:?}"));
    assert!(
        t >= Duration::from_millis(ms - 50),
        "{what}: closed after {t:?}, before its {ms} ms"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_half_sent_connections_are_closed_at_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (r, http, grpc) = receiver(dir.path(), 400, 60_000).await;
    let cases = tokio::task::spawn_blocking(move || {
        let t0 = Instant::now();
        // Nothing sent, on either listener.
        let silent = TcpStream::connect(http).unwrap();
        let silent_grpc = TcpStream::connect(grpc).unwrap();
        // Half a header.
        let mut half = TcpStream::connect(http).unwrap();
        half.write_all(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Ty")
            .unwrap();
        [
            ("silent", closed_within(silent, t0, MAX)),
            ("silent gRPC", closed_within(silent_grpc, t0, MAX)),
            ("half a header", closed_within(half, t0, MAX)),
        ]
    })
    .await
    .unwrap();
    for (what, closed) in cases {
        closed_after(what, closed, 400);
    }
    // A good client still gets through.
    let body = request(2).encode_to_vec();
    let (client, http) = (reqwest::Client::new(), http.to_string());
    let a = post(&client, &http, PROTO, None, body).await.unwrap();
    assert_eq!(a.status, 200);
    r.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_idle_after_a_request_are_closed_at_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (r, http, grpc) = receiver(dir.path(), 5_000, 400).await;
    let closed = tokio::task::spawn_blocking(move || {
        let mut idle = TcpStream::connect(http).unwrap();
        let body = request(1).encode_to_vec();
        let head = format!(
            "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: {PROTO}\r\n\
             Content-Length: {}\r\n\r\n",
            body.len()
        );
        idle.write_all(head.as_bytes()).unwrap();
        idle.write_all(&body).unwrap();
        let mut answer = [0u8; 12];
        idle.read_exact(&mut answer).unwrap();
        assert_eq!(&answer, b"HTTP/1.1 200", "the request is answered");
        closed_within(idle, Instant::now(), MAX)
    })
    .await
    .unwrap();
    closed_after("HTTP/1 idle after a request", closed, 400);
    // A gRPC channel that exported once and then idles is closed too (its
    // next export reconnects).
    let mut c = TraceServiceClient::connect(format!("http://{grpc}"))
        .await
        .unwrap();
    c.export(request(3)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    c.export(request(4)).await.unwrap();
    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.requests.ok, 3, "{summary:?}");
}

/// Raises this process' own open-file limit to its hard limit, to hold
/// more idle connections than the receiver may.
fn raise_own_file_limit() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eleven_hundred_idle_connections_under_a_1024_file_limit_do_not_starve_a_good_client() {
    raise_own_file_limit();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let http = intpath_test_support::free_addr();
    let grpc = intpath_test_support::free_addr();
    let child = std::process::Command::new("prlimit")
        .arg("--nofile=1024:1024")
        .arg(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["receive", "--db"])
        .arg(&db)
        .args(["--otlp-listen", &http, "--otlp-grpc-listen", &grpc])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for_listener(&http, Duration::from_secs(20)));
    assert!(wait_for_listener(&grpc, Duration::from_secs(20)));
    let idle: Vec<TcpStream> = (0..1_100)
        .map(|i| {
            let addr = if i % 2 == 0 { &http } else { &grpc };
            TcpStream::connect(addr).unwrap()
        })
        .collect();
    // Let the receiver accept what it will.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut through = 0;
    for n in 0..10u8 {
        let body = request(n).encode_to_vec();
        if let Ok(a) = post(&client, &http, PROTO, None, body).await {
            through += u32::from(a.status == 200);
        }
    }
    let mut grpc_client = tokio::time::timeout(
        Duration::from_secs(5),
        TraceServiceClient::connect(format!("http://{grpc}")),
    )
    .await
    .expect("gRPC connect in time")
    .unwrap();
    let grpc_ok = tokio::time::timeout(Duration::from_secs(5), grpc_client.export(request(20)))
        .await
        .is_ok_and(|r| r.is_ok());
    drop(idle);
    let (ok, summary, out) = common::disk::terminate(child);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(through, 10, "good client: {through} of 10 through\n{log}");
    assert!(grpc_ok, "the gRPC export did not get through\n{log}");
    assert!(ok, "{summary}\n{log}");
    assert_eq!(summary["requests"]["ok"], 11, "{summary}");
    let caps = log.matches("closing the oldest idle ones").count();
    assert!((1..=2).contains(&caps), "logged {caps} times:\n{log}");
    assert!(
        log.contains("connections closed by the limits") && log.contains("closed_at_cap="),
        "{log}"
    );
}
