//! `intpath-collector collect`: its flags and the capture loop.

use anyhow::Context;
use clap::Args;
use intpath_collector::capture::{Collector, Options};
use intpath_collector::metrics::{Metrics, MetricsServer};
use intpath_core::plan::{FollowedPlan, Plan};
use intpath_store::{Db, LinkMap, Retention, Store, StoreMode};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Capture probes and store their telemetry until SIGINT or SIGTERM.
#[derive(Debug, Clone, Args)]
pub struct CollectArgs {
    /// Capture probe frames on this interface (promiscuous; needs root).
    #[arg(long, required_unless_present = "udp")]
    pub iface: Vec<String>,
    /// Receive probes as UDP datagrams on this address (e.g. 127.0.0.1:9555).
    #[arg(long)]
    pub udp: Option<SocketAddr>,
    /// Telemetry database (created if missing; each start is a new run): a
    /// SQLite file or a `postgres://` URL, which many collectors may share.
    #[arg(long, default_value = "telemetry.db")]
    pub db: Db,
    /// Join the run other collectors started with the same key (one per
    /// group of sinks, into one PostgreSQL database), so queries and
    /// heatmaps see all of them as one run.
    #[arg(long, value_name = "KEY")]
    pub run_key: Option<String>,
    /// Drop telemetry older than this (e.g. 90m, 12h, 7d; PostgreSQL only:
    /// whole hourly partitions go).
    #[arg(long, value_name = "DURATION", value_parser = parse_retention)]
    pub retention: Option<Retention>,
    /// Plan file the probes follow.
    #[arg(long)]
    pub plan: PathBuf,
    /// Start a new run whenever the plan file changes (`intpath watch
    /// --plan` rewrites it after a replan).
    #[arg(long)]
    pub follow_plan: bool,
    /// Topology spec the plan was made for.
    #[arg(long)]
    pub topo: String,
    /// Width of the per-link time buckets, ms.
    #[arg(long, default_value_t = 100)]
    pub bucket_ms: u64,
    /// Longest a probe waits in memory before it is stored, ms.
    #[arg(long, default_value_t = 250)]
    pub flush_ms: u64,
    /// Raw probe rows to keep: `raw` (every probe with its hop records),
    /// `buckets` (only the per-link and per-path time buckets, enough for
    /// queries, heatmaps and `watch`) or `sampled:N` (probes 0, N, 2N, ...
    /// of each path, plus all buckets).
    #[arg(long, default_value_t = StoreMode::Raw)]
    pub store: StoreMode,
    /// Farthest a probe's send time may lie from its arrival, in seconds
    /// (clock skew plus one-way delay); others count as `send_time` rejects.
    /// 0 or `off` accepts any send time (replaying old probes).
    #[arg(long, value_name = "SECONDS", default_value = "10")]
    pub send_window: intpath_collector::Plausibility,
    /// Receive buffer to ask for the UDP socket, bytes (the kernel clamps it
    /// to net.core.rmem_max; the log says what it granted). Datagrams beyond
    /// it are dropped by the kernel and reported as `udp_drops`.
    #[arg(long, value_name = "BYTES", default_value_t = Options::default().udp_rcvbuf)]
    pub udp_rcvbuf: usize,
    /// Probes to hold in memory while the database cannot be written (a full
    /// disk, a server away); beyond that, batches are counted as lost.
    #[arg(long, value_name = "PROBES", default_value_t = Options::default().max_held)]
    pub max_held_probes: usize,
    /// Serve what is stored as Prometheus metrics (OpenMetrics text) on
    /// http://ADDR/metrics.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub otlp: super::receive::OtlpArgs,
}

/// Runs the collector until SIGINT or SIGTERM, then stores everything
/// buffered and closes the database. With `--follow-plan`, a rewritten plan
/// file closes the run and starts a new one on the new plan.
pub async fn run_collect(args: CollectArgs, links: LinkMap) -> anyhow::Result<()> {
    let stop = intpath_core::shutdown::signals().context("cannot catch signals")?;
    tokio::pin!(stop);
    for iface in &args.iface {
        intpath_collector::capture::interface(iface)?;
    }
    let (mut followed, plan) = FollowedPlan::open(&args.plan)?;
    let links = Arc::new(links);
    let metrics = Metrics::default();
    let server = match args.metrics_listen {
        Some(addr) => {
            let (limits, tls) = (args.otlp.limits.limits(), args.otlp.limits.tls()?);
            Some(MetricsServer::start(metrics.clone(), addr, limits, tls).await?)
        }
        None => None,
    };
    let opts = Options {
        bucket: Duration::from_millis(args.bucket_ms.max(1)),
        flush_every: Duration::from_millis(args.flush_ms.max(1)),
        store: args.store,
        metrics: server.is_some().then_some(metrics),
        run_key: args.run_key.clone(),
        retention: args.retention,
        plausible: args.send_window,
        udp_rcvbuf: args.udp_rcvbuf,
        max_held: args.max_held_probes,
        ..Options::default()
    };
    let mut c = start_run(&args, links.clone(), &plan, opts.clone()).await?;
    let receiver = args.otlp.start(&args.db, false).await?;
    let mut look = tokio::time::interval(Duration::from_millis(500));
    let mut earlier_loss = None;
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = look.tick(), if args.follow_plan => {
                let plan = match followed.poll() {
                    None => continue,
                    Some(Ok(plan)) => plan,
                    Some(Err(e)) => {
                        tracing::warn!("keeping the current plan: {e}");
                        continue;
                    }
                };
                let summary = c.shutdown().await?;
                if let Err(e) = summary.check() {
                    tracing::error!("run {}: {e}", summary.run);
                    earlier_loss.get_or_insert(e);
                }
                tracing::info!(
                    paths = plan.paths.len(),
                    "{} changed: run closed ({}), starting a new one",
                    followed.path().display(),
                    serde_json::to_string(&summary)?
                );
                c = start_run(&args, links.clone(), &plan, opts.clone()).await?;
            }
        }
    }
    tracing::info!("stopping: storing buffered probes");
    let summary = c.shutdown().await?;
    let spans = match receiver {
        Some(r) => Some(r.shutdown().await?),
        None => None,
    };
    // One line, so that whoever reads the last line of stdout (the demo)
    // finds the probe counts whether or not spans were received.
    let report = Report {
        probes: &summary,
        spans: spans.clone(),
    };
    println!("{}", serde_json::to_string(&report)?);
    if let Some(s) = server {
        s.shutdown().await?;
    }
    // Exit non-zero, after the summary, when probes or spans were lost.
    if let Err(e) = spans.as_ref().map_or(Ok(()), |s| s.check()) {
        summary.check()?;
        return Err(e.into());
    }
    summary.check()?;
    match earlier_loss {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// What `collect` prints when it stops: the run's summary and, with an OTLP
/// receiver, the receiver's under `spans`.
#[derive(serde::Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    probes: &'a intpath_collector::capture::Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    spans: Option<intpath_collector::otlp::Summary>,
}

/// A new run on `plan`, receiving from every source the arguments name.
async fn start_run(
    args: &CollectArgs,
    links: Arc<LinkMap>,
    plan: &Plan,
    opts: Options,
) -> anyhow::Result<Collector> {
    if args.retention.is_some() && !args.db.is_postgres() {
        anyhow::bail!("--retention needs a postgres:// --db (SQLite files keep everything)");
    }
    let store = Store::open(&args.db).await?;
    let mut c = Collector::start(store, links, plan, opts).await?;
    if let Some(addr) = args.udp {
        c.listen_udp(addr).await?;
    }
    for iface in &args.iface {
        c.capture_iface(iface)?;
    }
    Ok(c)
}

/// `90s`, `30m`, `12h` or `7d`.
fn parse_retention(s: &str) -> Result<Retention, String> {
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{s}: expected a number and a unit (s, m, h, d)"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(format!("{s}: the unit must be s, m, h or d")),
    };
    Ok(Retention(Duration::from_secs(n.saturating_mul(secs))))
}

/// The switches and links of a topology spec.
pub fn load_links(spec: &str) -> anyhow::Result<LinkMap> {
    let t = intpath_core::topo::Topology::load(spec)?;
    Ok(LinkMap::from_topology(&t))
}
