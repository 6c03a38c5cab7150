//! The demo's collector: `intpath-collector collect` on one Mininet host,
//! storing into the run's database (SQLite, or PostgreSQL with `--db`; with
//! the workload, also the spans its OTLP receiver takes).

use super::network::HostNs;
use super::procs::{in_netns, Proc};
use super::telemetry::newest_run;
use anyhow::{bail, Result};
use intpath_collector::store::{Db, RunId};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a collector may take to open its run.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// What the collector is started with.
pub struct CollectorSpec<'a> {
    pub binary: &'a Path,
    pub db: &'a Db,
    pub plan_json: &'a Path,
    pub topo_json: &'a Path,
    pub log: &'a Path,
    /// Also receive OTLP/HTTP spans on this address (the host's own).
    pub otlp_listen: Option<std::net::SocketAddr>,
}

/// A running collector and the run it stores into.
pub struct Collector {
    proc: Proc,
    pub run: RunId,
    pub db: Db,
}

impl Collector {
    /// Starts the collector on `host` and waits until it has opened a run.
    pub fn start(
        rt: &tokio::runtime::Runtime,
        spec: &CollectorSpec,
        host: &HostNs,
    ) -> Result<Self> {
        let before = rt.block_on(newest_run(spec.db))?;
        let mut cmd = in_netns(host.pid, spec.binary);
        cmd.arg("collect")
            .args(["--iface", &host.intf])
            .arg("--db")
            .arg(db_arg(spec.db))
            .arg("--plan")
            .arg(spec.plan_json)
            .arg("--topo")
            .arg(spec.topo_json);
        if let Some(addr) = spec.otlp_listen {
            cmd.args(["--otlp-listen", &addr.to_string()]);
        }
        let mut proc = Proc::spawn("collector", cmd, spec.log, true)?;
        let deadline = Instant::now() + START_TIMEOUT;
        let run = loop {
            check_running(&mut proc)?;
            if let Some(run) = rt
                .block_on(newest_run(spec.db))?
                .filter(|&r| Some(r) != before)
            {
                break run;
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "the collector started no run within {START_TIMEOUT:?}; {}",
                spec.log.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        Ok(Self {
            proc,
            run,
            db: spec.db.to_owned(),
        })
    }

    /// An error with the end of its log if the collector has stopped.
    pub fn check(&mut self) -> Result<()> {
        check_running(&mut self.proc)
    }

    /// Stops the collector (it flushes what it holds first) and checks that
    /// it ended well.
    pub fn stop(&mut self) -> Result<()> {
        let status = self.proc.stop(Duration::from_secs(20))?;
        anyhow::ensure!(
            status.success(),
            "the collector failed ({status}); {}:\n{}",
            self.proc.log.display(),
            self.proc.log_tail(10)
        );
        Ok(())
    }
}

/// `--db` as the collector must get it (a URL with its password).
fn db_arg(db: &Db) -> std::ffi::OsString {
    match db {
        Db::Sqlite(p) => p.clone().into(),
        Db::Postgres(url) => url.into(),
    }
}

fn check_running(proc: &mut Proc) -> Result<()> {
    if let Some(status) = proc.poll()? {
        bail!(
            "the collector stopped ({status}); {}:\n{}",
            proc.log.display(),
            proc.log_tail(10)
        );
    }
    Ok(())
}
