//! The shop (`apps/shop`), eight Flask services traced only by the official
//! OpenTelemetry Python SDK, run whole on loopback by its own `run-local`:
//! the application we did not write, for the tests that must hold on it.

use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

/// One `shop.py run-local` run.
#[derive(Debug, Clone)]
pub struct Shop<'a> {
    /// OTLP/HTTP base URL every service exports to (`http://IP:PORT`).
    pub otlp: &'a str,
    pub duration_s: u32,
    pub rate: u32,
    pub seed: u64,
    /// `SERVICE:MS:SHARE:AFTER_S`, as `run-local --fault` takes it
    /// (`database:…` slows inventory's queries).
    pub fault: Option<&'a str>,
    /// `SERVICE:AFTER_S:FOR_S`, as `run-local --freeze` takes it: the
    /// service's process stopped for a while.
    pub freeze: Option<&'a str>,
    /// A PostgreSQL URL inventory reads its stock from (`run-local --db`).
    pub db: Option<&'a str>,
    /// Extra `OTEL_*` settings (e.g. the semantic-convention opt-in).
    pub env: &'a [(&'a str, &'a str)],
}

/// Runs the shop to the end; its JSON report (ports, fault, load summary).
/// Panics with the shop's stderr when it fails or takes longer than the
/// load plus three minutes.
pub fn run(shop: &Shop<'_>) -> Value {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../apps/shop/shop.py");
    let mut cmd = Command::new(&python);
    cmd.arg(script)
        .args(["run-local", "--otlp", shop.otlp])
        .args(["--duration", &shop.duration_s.to_string()])
        .args(["--rate", &shop.rate.to_string()])
        .args(["--seed", &shop.seed.to_string()]);
    if let Some(f) = shop.fault {
        cmd.args(["--fault", f]);
    }
    if let Some(f) = shop.freeze {
        cmd.args(["--freeze", f]);
    }
    if let Some(db) = shop.db {
        cmd.args(["--db", db]);
    }
    // Only what the test says reaches the SDK.
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("OTEL_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(shop.env.iter().copied());
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{python} {script}: {e}"));
    let deadline = Duration::from_secs(u64::from(shop.duration_s) + 180);
    let out = crate::child::output_within(child, deadline, "run-local");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{python} {script}: {stderr}");
    // The SDK logs failed exports instead of failing: none may be logged.
    assert!(!stderr.contains("Failed to export"), "{stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("run-local printed no JSON report ({e}): {stderr}"))
}
