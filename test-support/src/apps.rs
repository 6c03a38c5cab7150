//! The Python applications we did not write (`apps/`), each run to the end
//! by its own script: the harness the tests that must hold on them share.

use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `apps/SCRIPT` with `args` and the environment settings in `env`
/// (of the caller's `OTEL_*` settings, none), and returns the JSON report it prints. Panics
/// with the script's stderr when it fails, logs a failed export (the SDK
/// logs those instead of failing) or outlives `limit`.
pub fn run(script: &str, args: &[String], env: &[(&str, &str)], limit: Duration) -> Value {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let path = format!("{}/../apps/{script}", env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(&python);
    cmd.arg(&path).args(args);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("OTEL_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied());
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{python} {path}: {e}"));
    let out = crate::child::output_within(child, limit, script);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{python} {path}: {stderr}");
    assert!(!stderr.contains("Failed to export"), "{stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{script} printed no JSON report ({e}): {stderr}"))
}

/// One `run-local` of an app that takes `--otlp`, `--duration`, `--rate`,
/// `--seed` and `--fault SERVICE:MS:SHARE:AFTER_S` (the shop, the orders
/// app), with the app's own further flags in `extra`.
#[derive(Debug, Clone)]
pub struct RunLocal<'a> {
    /// OTLP/HTTP base URL every service exports to (`http://IP:PORT`).
    pub otlp: &'a str,
    pub duration_s: u32,
    pub rate: u32,
    pub seed: u64,
    pub fault: Option<&'a str>,
}

impl RunLocal<'_> {
    /// Runs `apps/SCRIPT run-local` to the end, allowing the load plus
    /// three minutes; its JSON report.
    pub fn run(&self, script: &str, extra: &[String], env: &[(&str, &str)]) -> Value {
        let mut args: Vec<String> = ["run-local", "--otlp", self.otlp].map(String::from).into();
        args.extend(["--duration".into(), self.duration_s.to_string()]);
        args.extend(["--rate".into(), self.rate.to_string()]);
        args.extend(["--seed".into(), self.seed.to_string()]);
        if let Some(f) = self.fault {
            args.extend(["--fault".into(), f.into()]);
        }
        args.extend_from_slice(extra);
        let limit = Duration::from_secs(u64::from(self.duration_s) + 180);
        run(script, &args, env, limit)
    }
}

/// Runs `app` (given the receiver's OTLP/HTTP base URL) on a blocking
/// thread against a fresh OTLP receiver storing into `db`, and returns
/// the receiver's summary once it has stored everything and stopped.
pub async fn received<R: Send + 'static>(
    db: &std::path::Path,
    app: impl FnOnce(&str) -> R + Send + 'static,
) -> (R, intpath_collector::otlp::Summary) {
    use intpath_collector::otlp::{Config, Receiver};
    use intpath_store::{Db, Store};
    let cfg = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Config::default()
    };
    let receiver = Receiver::start(Store::open(Db::from(db)).await.unwrap(), cfg)
        .await
        .unwrap();
    let otlp = format!("http://{}", receiver.local_addr());
    let out = tokio::task::spawn_blocking(move || app(&otlp))
        .await
        .unwrap();
    (out, receiver.shutdown().await.unwrap())
}
