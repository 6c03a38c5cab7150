//! A real Prometheus server (Debian's `prometheus` package) for the tests of
//! `/metrics`: started on loopback with a generated configuration that
//! scrapes the given targets every second, its database in a temporary
//! directory, killed on drop. Queried over its HTTP API as Grafana would.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running Prometheus.
pub struct Prometheus {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

/// The `prometheus` binary, or a message saying how to get it: the tests
/// that need it fail with this message rather than skip.
pub fn binary() -> Result<PathBuf, String> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("prometheus"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "no prometheus on PATH: install Debian's prometheus package \
             (scripts/install-deps.sh does)"
                .to_owned()
        })
}

impl Prometheus {
    /// Starts Prometheus scraping `http://{target}/metrics` for each target
    /// every second; returns once it answers queries.
    pub fn start(targets: &[&str]) -> Self {
        let bin = binary().unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = dir.path().join("prometheus.yml");
        let targets = serde_json::to_string(targets).expect("strings");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n\
                 scrape_configs:\n  - job_name: intpath\n    static_configs:\n\
                 \x20     - targets: {targets}\n"
            ),
        )
        .expect("write the configuration");
        let addr = crate::free_addr();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("a log file");
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("prometheus starts");
        let mut p = Prometheus {
            child,
            addr,
            _dir: dir,
        };
        let until = Instant::now() + Duration::from_secs(60);
        while http_get(&p.addr, "/-/ready").map(|(s, _)| s) != Some(200) {
            if let Ok(Some(status)) = p.child.try_wait() {
                panic!("prometheus exited ({status}): {}", p.log());
            }
            assert!(Instant::now() < until, "prometheus not ready: {}", p.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        p
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// What Prometheus logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// The samples of an instant query (`/api/v1/query`): each series'
    /// labels and value.
    pub fn query(&self, promql: &str) -> Vec<(serde_json::Value, f64)> {
        let url = format!("http://{}/api/v1/query", self.addr);
        let resp = reqwest::blocking::Client::new()
            .get(url)
            .query(&[("query", promql)])
            .send()
            .expect("prometheus answers");
        let status = resp.status().as_u16();
        let body = resp.text().expect("a body");
        let v: serde_json::Value = serde_json::from_str(&body).expect("a JSON answer");
        assert_eq!(status, 200, "{promql}: {body}");
        v["data"]["result"]
            .as_array()
            .expect("a vector result")
            .iter()
            .map(|s| {
                let value = s["value"][1].as_str().and_then(|x| x.parse().ok());
                (s["metric"].clone(), value.expect("a sample value"))
            })
            .collect()
    }

    /// Polls `promql` until `done` holds for its samples (scrapes come
    /// every second); panics with the last answer after `timeout`.
    pub fn wait_for(
        &self,
        promql: &str,
        timeout: Duration,
        done: impl Fn(&[(serde_json::Value, f64)]) -> bool,
    ) -> Vec<(serde_json::Value, f64)> {
        let until = Instant::now() + timeout;
        loop {
            let got = self.query(promql);
            if done(&got) {
                return got;
            }
            assert!(Instant::now() < until, "{promql}: still {got:?}");
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET on loopback: status and body, `None` when nothing answers.
pub fn http_get(addr: &str, path: &str) -> Option<(u16, String)> {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .ok()?;
    let resp = client.get(format!("http://{addr}{path}")).send().ok()?;
    let status = resp.status().as_u16();
    Some((status, resp.text().ok()?))
}
