//! A client we did not write: the official OpenTelemetry Python SDK exports
//! a parent and a child span over OTLP/HTTP and over OTLP/gRPC, in plain
//! text and over TLS with a client certificate (configured by the SDK's own
//! environment variables), and the database holds exactly what the SDK says
//! it sent.

mod common;

use common::otlp::{start_with, stored};
use intpath_collector::otlp::Config;
use intpath_collector::serve::{server_config, TlsFiles};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_trace_over_http_is_stored_field_for_field() {
    python_sdk_trace_is_stored_field_for_field("http", false).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_trace_over_grpc_is_stored_field_for_field() {
    python_sdk_trace_is_stored_field_for_field("grpc", false).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_trace_over_https_with_a_client_certificate_is_stored() {
    python_sdk_trace_is_stored_field_for_field("http", true).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_trace_over_grpc_tls_with_a_client_certificate_is_stored() {
    python_sdk_trace_is_stored_field_for_field("grpc", true).await
}

/// The SDK exports over `protocol` (`http` or `grpc`, as the script takes
/// it), over mutual TLS when `tls`; every span it reports sending is stored
/// as it sent it.
async fn python_sdk_trace_is_stored_field_for_field(protocol: &str, tls: bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let certs = tls.then(|| intpath_test_support::tls::make(dir.path()));
    let cfg = Config {
        max_body: 1 << 20,
        tls: certs.as_ref().map(|c| {
            server_config(&TlsFiles {
                cert: c.server_cert.clone(),
                key: c.server_key.clone(),
                client_ca: Some(c.ca.clone()),
            })
            .unwrap()
        }),
        ..Config::default()
    };
    let r = start_with(&db, cfg).await;
    let scheme = if tls { "https" } else { "http" };
    let endpoint = match protocol {
        "grpc" => format!("{scheme}://{}", r.grpc_addr().expect("gRPC served")),
        _ => format!("{scheme}://{}/v1/traces", r.local_addr()),
    };
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/otel/export_trace.py");
    let mut cmd = tokio::process::Command::new(&python);
    cmd.arg(script).args([protocol, &endpoint]);
    if let Some(c) = &certs {
        cmd.env("OTEL_EXPORTER_OTLP_CERTIFICATE", &c.ca)
            .env("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &c.client_cert)
            .env("OTEL_EXPORTER_OTLP_CLIENT_KEY", &c.client_key)
            // `requests` lets these override the CA the exporter sets on
            // its session.
            .env_remove("REQUESTS_CA_BUNDLE")
            .env_remove("CURL_CA_BUNDLE");
    }
    let out = cmd.output().await.unwrap();
    assert!(
        out.status.success(),
        "{python} {script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The SDK logs failed exports instead of failing: none may be logged.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Failed to export"), "{stderr}");
    let sent: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.spans_stored, 2);

    let got = stored(&db).await;
    assert_eq!(got.spans.len(), 2);
    for want in &sent {
        let s = got
            .spans
            .iter()
            .find(|s| Some(s.span.span_id.as_str()) == want["span_id"].as_str())
            .unwrap_or_else(|| panic!("span {} not stored", want["span_id"]));
        let row = &s.span;
        assert_eq!(Some(row.trace_id.as_str()), want["trace_id"].as_str());
        assert_eq!(
            row.parent_span_id.as_deref(),
            want["parent_span_id"].as_str()
        );
        assert_eq!(Some(row.name.as_str()), want["name"].as_str());
        assert_eq!(Some(i64::from(row.kind)), want["kind"].as_i64());
        assert_eq!(Some(row.start_ns), want["start_ns"].as_i64());
        assert_eq!(Some(row.end_ns), want["end_ns"].as_i64());
        let attrs: Value = serde_json::from_str(&row.attributes).unwrap();
        assert_eq!(attrs, want["attributes"]);
        assert_eq!(row.scope_name, "intpath-otel-test");
        assert_eq!(row.scope_version, "0.1");
        let res = &got.resources[&s.resource_id];
        assert_eq!(res.service, "frontend");
        let res_attrs: Value = serde_json::from_str(&res.attributes).unwrap();
        assert_eq!(res_attrs, want["resource"]);
    }
    // Parent and child: one trace, the child naming the parent.
    let (parent, child) = (&sent[1], &sent[0]);
    assert_eq!(parent["name"], "GET /hotels");
    assert_eq!(child["parent_span_id"], parent["span_id"]);
    assert_eq!(child["trace_id"], parent["trace_id"]);
}
