//! SIGTERM under load, over both OTLP/HTTP and OTLP/gRPC, loses no
//! acknowledged span: the receiver process stops taking requests, finishes
//! those in flight and stores everything it acknowledged.

mod common;

use common::otlp::{hex, numbered, stored, PROTO};
use intpath_test_support::otlp::{gzip_bytes, post, wait_for_listener};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use std::collections::HashSet;
use std::time::Duration;
use tonic::codec::CompressionEncoding;

/// 200 spans of their own per request: request `n` of client `c`.
fn load_request(c: u8, n: u32) -> ExportTraceServiceRequest {
    numbered(c, n, 200)
}

/// Client `c` exports until the receiver stops answering; the requests it
/// saw acknowledged. Clients 0 and 1 speak OTLP/HTTP, 2 and 3 OTLP/gRPC;
/// half the requests are gzipped.
async fn export_until_refused(c: u8, http: String, grpc: String) -> Vec<u32> {
    let mut acked = Vec::new();
    if c < 2 {
        let client = reqwest::Client::new();
        for n in 0..10_000u32 {
            let body = load_request(c, n).encode_to_vec();
            let (enc, body) = match n % 2 {
                1 => (Some("gzip"), gzip_bytes(&body)),
                _ => (None, body),
            };
            match post(&client, &http, PROTO, enc, body).await {
                Ok(a) if a.status == 200 => acked.push(n),
                _ => break,
            }
        }
    } else {
        let mut client = TraceServiceClient::connect(format!("http://{grpc}"))
            .await
            .unwrap();
        if c == 3 {
            client = client.send_compressed(CompressionEncoding::Gzip);
        }
        for n in 0..10_000u32 {
            match client.export(load_request(c, n)).await {
                Ok(_) => acked.push(n),
                Err(_) => break,
            }
        }
    }
    acked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_loses_no_acknowledged_span() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let addr = intpath_test_support::free_addr();
    let grpc = intpath_test_support::free_addr();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["receive", "--db"])
        .arg(&db)
        .args(["--otlp-listen", &addr, "--otlp-grpc-listen", &grpc])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for_listener(&addr, Duration::from_secs(20)));
    assert!(wait_for_listener(&grpc, Duration::from_secs(20)));
    let mut tasks = Vec::new();
    for c in 0..4u8 {
        let (addr, grpc) = (addr.clone(), grpc.clone());
        tasks.push(tokio::spawn(async move {
            (c, export_until_refused(c, addr, grpc).await)
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let mut acked = HashSet::new();
    for t in tasks {
        let (c, ns) = t.await.unwrap();
        assert!(!ns.is_empty(), "client {c} got no answer before SIGTERM");
        assert!(ns.len() < 10_000, "client {c} was never stopped");
        for n in ns {
            for i in 0..200u32 {
                let s =
                    load_request(c, n).resource_spans[0].scope_spans[0].spans[i as usize].clone();
                acked.insert((hex(&s.trace_id), hex(&s.span_id)));
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "receiver exited with {}", out.status);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    let got = stored(&db).await;
    let stored: HashSet<(String, String)> = got
        .spans
        .into_iter()
        .map(|s| (s.span.trace_id, s.span.span_id))
        .collect();
    let lost = acked.difference(&stored).count();
    assert_eq!(lost, 0, "{lost} of {} acknowledged spans lost", acked.len());
    assert_eq!(summary["spans_stored"].as_u64(), Some(stored.len() as u64));
}

/// A supervisor (or a test) that stops the receiver as soon as its port
/// answers gets a clean stop and the summary, never a death by the default
/// action of SIGTERM; tried a few times, since the window is short.
#[test]
fn sigterm_the_moment_the_port_opens_still_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    let outs = intpath_test_support::daemon::stops_cleanly_once_listening(20, |addr| {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_intpath-collector"));
        c.args(["receive", "--db"])
            .arg(dir.path().join(format!("{i}.db")))
            .args(["--otlp-listen", addr]);
        c
    });
    for out in outs {
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["spans_stored"].as_u64(), Some(0), "{summary}");
    }
}
