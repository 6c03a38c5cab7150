//! `intpath deploy`: install a plan on running switches over P4Runtime.

use anyhow::{Context, Result};
use intpath::deploy::{self, host_routes, DeployOptions, SinkMode, SwitchReport};
use intpath_core::plan::Plan;
use intpath_core::sessions;
use intpath_core::switch_map::SwitchMap;
use intpath_core::topo::Topology;
use intpath_p4rt::p4info::{self, P4InfoIndex};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Where the switches are and how to talk to them; shared by `deploy`,
/// `switches status` and `watch`.
#[derive(clap::Args, Clone)]
pub struct Connection {
    /// Switch map (JSON, as the Mininet launcher writes it): name, gRPC
    /// address, device id of every switch.
    #[arg(long, value_name = "MAP")]
    pub switches: PathBuf,
    /// P4Info of the switches' program [default: the built-in sr_int.p4 one].
    #[arg(long, value_name = "FILE")]
    pub p4info: Option<PathBuf>,
    /// Election id for arbitration: the highest connected controller is
    /// primary and the only one allowed to write. Defaults to the command's
    /// own id (`intpath_core::sessions`: watch 30, deploy 20, status 1), so
    /// that two intpath sessions never refuse or overrule each other.
    #[arg(long)]
    pub election_id: Option<u64>,
    /// Seconds to wait for a switch to accept the connection.
    #[arg(long, default_value_t = 3.0)]
    pub connect_timeout: f64,
}

impl Connection {
    pub fn load(&self) -> Result<(SwitchMap, Arc<P4InfoIndex>)> {
        let map = SwitchMap::load(&self.switches)?;
        let ix = match &self.p4info {
            Some(path) => P4InfoIndex::new(p4info::load(path)?)?,
            None => intpath_sr_int::p4info()?,
        };
        Ok((map, Arc::new(ix)))
    }

    /// Options with `--election-id`, else `session`'s id.
    pub fn options(&self, session: u64) -> DeployOptions {
        DeployOptions {
            election_id: u128::from(self.election_id.unwrap_or(session)),
            connect_timeout: Duration::from_secs_f64(self.connect_timeout.max(0.01)),
            ..DeployOptions::default()
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// Generator expression or topology file the plan was made for.
    #[arg(long)]
    topo: String,
    /// Plan file (`intpath plan --format json`).
    #[arg(long)]
    plan: PathBuf,
    #[command(flatten)]
    conn: Connection,
    /// Where each path's last switch sends the finished probe.
    #[arg(long, value_enum, default_value_t = Sink::Collector)]
    sink: Sink,
    /// Target config pushed with the P4Info to a switch without a pipeline
    /// (bmv2 JSON from p4c); the reference switch needs none.
    #[arg(long, value_name = "FILE")]
    device_config: Option<PathBuf>,
    /// Replace a different pipeline on a switch instead of stopping with
    /// the first differing name.
    #[arg(long)]
    replace_pipeline: bool,
    /// Print every insert / modify / delete it would make; write nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Sink {
    /// IPv4-forward the probe to its destination address (the collector).
    Collector,
    /// Hand the probe to the controller (packet-in).
    Cpu,
}

pub fn run(a: Args) -> Result<()> {
    let topo = Topology::load(&a.topo)?;
    let plan = Plan::load(&a.plan)?;
    let (map, ix) = a.conn.load()?;
    check_map(&topo, &map, &a.conn.switches)?;
    let sink = match a.sink {
        Sink::Collector => SinkMode::Collector,
        Sink::Cpu => SinkMode::Cpu,
    };
    let intents = deploy::intents(&plan, &map, host_routes(&topo), sink)?;
    let mut options = a.conn.options(sessions::DEPLOY);
    options.dry_run = a.dry_run;
    options.replace_pipeline = a.replace_pipeline;
    if let Some(path) = &a.device_config {
        options.device_config =
            std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    }
    let reports = runtime()?.block_on(deploy::deploy(ix, &map, &intents, &options))?;
    print!("{}", render(&reports, a.dry_run));
    Ok(())
}

pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// The switch map must name every switch of the topology with its id: the
/// id is both the P4Runtime device id and the INT switch id.
pub fn check_map(topo: &Topology, map: &SwitchMap, path: &Path) -> Result<()> {
    for s in topo.switches() {
        let entry = map.get(&s.name).with_context(|| {
            format!(
                "{}: switch {} of the topology is missing",
                path.display(),
                s.name
            )
        })?;
        anyhow::ensure!(
            entry.device_id == u64::from(s.id),
            "{}: switch {} has device id {}, the topology says {}",
            path.display(),
            s.name,
            entry.device_id,
            s.id
        );
    }
    Ok(())
}

/// One line per switch (and each change on a dry run), then the totals.
pub fn render(reports: &[SwitchReport], dry_run: bool) -> String {
    let mut out = String::new();
    let verb = if dry_run { "would change" } else { "changed" };
    let (mut i, mut m, mut d) = (0, 0, 0);
    for r in reports {
        out.push_str(&format!(
            "{:<8} +{} ~{} -{} ({} unchanged){}\n",
            r.name,
            r.inserts,
            r.modifies,
            r.deletes,
            r.unchanged,
            if r.pipeline_pushed {
                ", pipeline pushed"
            } else {
                ""
            }
        ));
        if dry_run {
            for c in &r.changes {
                out.push_str(&format!("    {c}\n"));
            }
        }
        (i, m, d) = (i + r.inserts, m + r.modifies, d + r.deletes);
    }
    if i + m + d == 0 {
        out.push_str(&format!("{} switches already up to date\n", reports.len()));
    } else {
        out.push_str(&format!(
            "{verb}: {i} inserts, {m} modifies, {d} deletes on {} switches\n",
            reports.len()
        ));
    }
    out
}
