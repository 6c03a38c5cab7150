//! TLS on the collector's listeners with certificates made at test time:
//! with a client CA given, only clients holding a certificate it signed get
//! an answer from OTLP/HTTP and `/metrics` (Python's OpenSSL as the
//! client); the binary takes the certificates from its flags; a plaintext
//! listener on an address other than loopback says so in one line.

mod common;

use common::otlp::{request, start_with, stored, PROTO};
use intpath_collector::metrics::{Metrics, MetricsServer};
use intpath_collector::otlp::Config;
use intpath_collector::serve::{server_config, Limits, Tls, TlsFiles};
use intpath_test_support::otlp::wait_for_listener;
use intpath_test_support::tls::{make, Certs};
use prost::Message;
use std::path::Path;
use std::time::Duration;

fn mutual(c: &Certs) -> Tls {
    let files = TlsFiles {
        cert: c.server_cert.clone(),
        key: c.server_key.clone(),
        client_ca: Some(c.ca.clone()),
    };
    Some(server_config(&files).unwrap())
}

/// One request through `https_request.py`: the status, or `refused: ...`.
async fn https(
    url: &str,
    certs: &Certs,
    client: Option<(&Path, &Path)>,
    post: Option<&Path>,
) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/otel/https_request.py");
    let mut cmd = tokio::process::Command::new("python3");
    cmd.arg(script).arg(url).arg(&certs.ca);
    if let Some((cert, key)) = client {
        cmd.arg(cert).arg(key);
    }
    if let Some(body) = post {
        cmd.args(["--post", PROTO]).arg(body);
    }
    let out = cmd.output().await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_clients_with_a_certificate_of_the_ca_get_through() {
    let dir = tempfile::tempdir().unwrap();
    let c = make(dir.path());
    let db = dir.path().join("t.db");
    let r = start_with(
        &db,
        Config {
            tls: mutual(&c),
            ..Config::default()
        },
    )
    .await;
    let metrics = MetricsServer::start(
        Metrics::default(),
        "127.0.0.1:0".parse().unwrap(),
        Limits::default(),
        mutual(&c),
    )
    .await
    .unwrap();
    let body = dir.path().join("body.pb");
    std::fs::write(&body, request(1).encode_to_vec()).unwrap();
    let traces = format!("https://{}/v1/traces", r.local_addr());
    let scrape = format!("https://{}/metrics", metrics.local_addr());
    let good = Some((c.client_cert.as_path(), c.client_key.as_path()));
    let rogue = Some((c.rogue_cert.as_path(), c.rogue_key.as_path()));
    for (who, client) in [
        ("no certificate", None),
        ("another CA's certificate", rogue),
    ] {
        let a = https(&traces, &c, client, Some(&body)).await;
        assert!(a.starts_with("refused"), "OTLP/HTTP, {who}: {a}");
        let a = https(&scrape, &c, client, None).await;
        assert!(a.starts_with("refused"), "/metrics, {who}: {a}");
    }
    assert!(
        stored(&db).await.spans.is_empty(),
        "nothing stored before the good client"
    );
    assert_eq!(https(&traces, &c, good, Some(&body)).await, "200");
    assert_eq!(https(&scrape, &c, good, None).await, "200");
    // Plain HTTP on the TLS port gets no answer.
    let plain = reqwest::Client::new()
        .post(format!("http://{}/v1/traces", r.local_addr()))
        .header("content-type", PROTO)
        .body(request(2).encode_to_vec())
        .send()
        .await;
    assert!(plain.is_err(), "{plain:?}");
    metrics.shutdown().await.unwrap();
    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.requests.ok, 1, "{summary:?}");
    assert_eq!(stored(&db).await.spans.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_tls_from_its_flags_and_warns_of_plaintext_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let c = make(dir.path());
    let body = dir.path().join("body.pb");
    std::fs::write(&body, request(1).encode_to_vec()).unwrap();
    let run = |db: &str, host: &str, tls: bool| {
        let http = intpath_test_support::free_addr().replace("127.0.0.1", host);
        let grpc = intpath_test_support::free_addr().replace("127.0.0.1", host);
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_intpath-collector"));
        cmd.args(["receive", "--db"])
            .arg(dir.path().join(db))
            .args(["--otlp-listen", &http, "--otlp-grpc-listen", &grpc]);
        if tls {
            cmd.arg("--tls-cert").arg(&c.server_cert);
            cmd.arg("--tls-key").arg(&c.server_key);
            cmd.arg("--tls-client-ca").arg(&c.ca);
        }
        let child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let local = http.replace(host, "127.0.0.1");
        assert!(wait_for_listener(&local, Duration::from_secs(20)));
        (child, local)
    };
    let warning = "plaintext on an address other than loopback";
    // TLS from the flags, on every address: answered, no warning.
    let (child, addr) = run("tls.db", "0.0.0.0", true);
    let good = Some((c.client_cert.as_path(), c.client_key.as_path()));
    let url = format!("https://{addr}/v1/traces");
    assert_eq!(https(&url, &c, good, Some(&body)).await, "200");
    let (ok, summary, out) = common::disk::terminate(child);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(ok, "{summary} {log}");
    assert!(!log.contains(warning), "{log}");
    // Plaintext on every address: one line per listener.
    let (child, _) = run("plain.db", "0.0.0.0", false);
    let (_, _, out) = common::disk::terminate(child);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(log.matches(warning).count(), 2, "{log}");
    // Plaintext on loopback: nothing to warn of.
    let (child, _) = run("loopback.db", "127.0.0.1", false);
    let (_, _, out) = common::disk::terminate(child);
    assert!(!String::from_utf8_lossy(&out.stderr).contains(warning));
}
