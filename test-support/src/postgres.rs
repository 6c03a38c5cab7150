//! The PostgreSQL server tests write into: started on loopback by
//! `scripts/pg-test-server.sh` (scripts/test.sh does it) and named by
//! `INTPATH_TEST_PG`. Each test gets a fresh database of its own, so tests
//! run in parallel without seeing each other's rows.

use sqlx::Connection;
use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the test server's URL.
pub const ENV: &str = "INTPATH_TEST_PG";

/// The test server's URL. Panics, with how to start one, when unset: a test
/// that needs PostgreSQL never passes without it.
pub fn server_url() -> String {
    std::env::var(ENV).unwrap_or_else(|_| {
        panic!(
            "{ENV} is not set: this test needs a PostgreSQL server. Start one with \
             `scripts/pg-test-server.sh start /tmp/intpath-pg` and export {ENV}=<the URL it \
             prints> (scripts/test.sh does both)"
        )
    })
}

/// A new, empty database on the test server; returns its URL.
pub async fn fresh_database(tag: &str) -> String {
    fresh_database_on(&server_url(), tag).await
}

/// A new, empty database on the server at `server` (a URL of any of its
/// databases); returns its URL.
pub async fn fresh_database_on(server: &str, tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "t_{}_{}_{}",
        tag.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(30)
            .collect::<String>()
            .to_lowercase(),
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let mut c = sqlx::PgConnection::connect(server)
        .await
        .unwrap_or_else(|e| panic!("{server}: cannot connect: {e}"));
    for sql in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        sqlx::raw_sql(&sql)
            .execute(&mut c)
            .await
            .unwrap_or_else(|e| panic!("{server}: {sql}: {e}"));
    }
    c.close().await.ok();
    let base = server.rsplit_once('/').map_or(server, |(b, _)| b);
    format!("{base}/{name}")
}

/// Runs the async test body `$body(db: String)` twice: `sqlite` on a file in
/// a temporary directory, `postgres` on a fresh database of the test server.
/// One body, two backends: the same assertions hold for both.
#[macro_export]
macro_rules! on_both_backends {
    ($body:ident) => {
        mod $body {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let dir = $crate::tempdir().unwrap();
                let db = dir.path().join("telemetry.db");
                super::$body(db.to_str().unwrap().to_owned()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$body($crate::postgres::fresh_database(stringify!($body)).await).await;
            }
        }
    };
}

/// A PostgreSQL server of one test's own (`scripts/pg-test-server.sh` into a
/// temporary directory), for tests that stop or restart it under a client;
/// stopped when dropped.
pub struct PrivateServer {
    dir: tempfile::TempDir,
    pub url: String,
}

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg-test-server.sh");

fn script(cmd: &str, dir: &std::path::Path) -> String {
    let out = std::process::Command::new(SCRIPT)
        .arg(cmd)
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("{SCRIPT}: {e}"));
    assert!(
        out.status.success(),
        "{SCRIPT} {cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

impl PrivateServer {
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = script("start", dir.path());
        Self { dir, url }
    }

    pub fn stop(&self) {
        script("stop", self.dir.path());
    }

    pub fn start_again(&self) {
        script("start", self.dir.path());
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = std::process::Command::new(SCRIPT)
            .arg("stop")
            .arg(self.dir.path())
            .output();
    }
}
