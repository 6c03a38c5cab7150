//! The `heatmap`, `query` and `collect` commands, shared by the `intpath` CLI
//! and the `intpath-collector` binary.

use crate::capture::{Collector, Options};
use crate::heatmap::{self, Cell, Matrix, Scale, Timeline};
use crate::links::LinkMap;
use crate::query::{self, Metric, RunInfo, Stat};
use crate::store::{RunId, Store};
use crate::table::{Format, Table};
use anyhow::Context;
use clap::{Args, Subcommand};
use intpath_core::plan::{FollowedPlan, Plan};
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Which database and run to read.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// Telemetry database written by the collector.
    #[arg(long, default_value = "telemetry.db")]
    pub db: PathBuf,
    /// Run to read (default: the newest).
    #[arg(long)]
    pub run: Option<RunId>,
}

/// A time range, in seconds after the run's first probe.
#[derive(Debug, Clone, Copy, Args)]
pub struct RangeArgs {
    /// Start (inclusive); default: the run's start.
    #[arg(long)]
    pub from: Option<f64>,
    /// End (exclusive); default: the run's end.
    #[arg(long)]
    pub to: Option<f64>,
}

#[derive(Debug, Clone, Args)]
pub struct MetricArgs {
    #[arg(long, value_enum, default_value_t = Metric::Qdepth)]
    pub metric: Metric,
    /// How samples in a window or bucket are summarised (not for loss).
    #[arg(long, value_enum, default_value_t = Stat::Mean)]
    pub stat: Stat,
}

/// Draw telemetry heatmaps (PNG; SVG for `.svg`, animated GIF for `.gif`).
#[derive(Debug, Clone, Args)]
pub struct HeatmapArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub metric: MetricArgs,
    /// Output file (frames: a `.gif` file or a directory for numbered PNGs).
    #[arg(short, long)]
    pub out: PathBuf,
    #[command(subcommand)]
    pub kind: HeatmapKind,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HeatmapKind {
    /// Switch × switch matrix, each link coloured by its metric over a window.
    Snapshot(RangeArgs),
    /// Links × time buckets over a range.
    Timeline {
        #[command(flatten)]
        range: RangeArgs,
        /// Also show links to and from hosts.
        #[arg(long)]
        hosts: bool,
    },
    /// One snapshot per step over a range, on one colour scale.
    Frames {
        #[command(flatten)]
        range: RangeArgs,
        /// Window of each frame, seconds.
        #[arg(long, default_value_t = 1.0)]
        step: f64,
        /// Display time of each GIF frame, ms.
        #[arg(long, default_value_t = 500)]
        delay_ms: u32,
    },
}

/// Ask the telemetry store: link metrics, hottest links, paths, rejects.
#[derive(Debug, Clone, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(subcommand)]
    pub what: QueryKind,
}

#[derive(Debug, Clone, Subcommand)]
pub enum QueryKind {
    /// One link's metric per time bucket (min, mean, max).
    Link {
        /// `SRC:PORT` or `SRC->DST`.
        link: String,
        #[arg(long, value_enum, default_value_t = Metric::Qdepth)]
        metric: Metric,
        #[command(flatten)]
        range: RangeArgs,
    },
    /// The links with the highest metric in a window.
    Hottest {
        #[command(flatten)]
        metric: MetricArgs,
        #[command(flatten)]
        range: RangeArgs,
        /// How many links to list.
        #[arg(long, default_value_t = 10)]
        top: usize,
    },
    /// Per-path probes, loss, duplicates, reordering and end-to-end delay.
    Paths(RangeArgs),
    /// Probes that were not stored, by reason.
    Rejects,
    /// The runs in the database.
    Runs,
}

/// Capture probes and store their telemetry until SIGINT or SIGTERM.
#[derive(Debug, Clone, Args)]
pub struct CollectArgs {
    /// Capture probe frames on this interface (promiscuous; needs root).
    #[arg(long, required_unless_present = "udp")]
    pub iface: Vec<String>,
    /// Receive probes as UDP datagrams on this address (e.g. 0.0.0.0:9555).
    #[arg(long)]
    pub udp: Option<SocketAddr>,
    /// Telemetry database (created if missing; each start is a new run).
    #[arg(long, default_value = "telemetry.db")]
    pub db: PathBuf,
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
}

/// Runs `fut` on a runtime of its own, on a thread of its own, so that callers
/// inside or outside a tokio runtime can both use these commands.
fn block_on<T: Send>(fut: impl Future<Output = anyhow::Result<T>> + Send) -> anyhow::Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(fut)
        })
        .join()
        .unwrap_or_else(|_| Err(anyhow::anyhow!("query thread panicked")))
    })
}

async fn open(db: &DbArgs) -> anyhow::Result<(Store, RunInfo)> {
    let store = Store::open_existing(&db.db).await?;
    let run = RunInfo::load(&store, db.run).await?;
    Ok((store, run))
}

fn scale_label(metric: Metric, stat: Stat) -> String {
    match metric {
        Metric::Loss => format!("{} ({})", metric.title(), metric.unit()),
        _ => format!(
            "{} {} ({})",
            format!("{stat:?}").to_lowercase(),
            metric.title(),
            metric.unit()
        ),
    }
}

pub fn run_heatmap(args: HeatmapArgs) -> anyhow::Result<()> {
    block_on(heatmap_async(args))
}

async fn heatmap_async(args: HeatmapArgs) -> anyhow::Result<()> {
    let (store, run) = open(&args.db).await?;
    let MetricArgs { metric, stat } = args.metric;
    let label = scale_label(metric, stat);
    let span = |w: query::Window| {
        let (from, to) = (run.seconds(w.from), run.seconds(w.to + 1));
        format!("{}–{} s", heatmap::seconds(from), heatmap::seconds(to))
    };
    match args.kind {
        HeatmapKind::Snapshot(r) => {
            let w = run.window(r.from, r.to);
            let values = query::link_values(&store, &run, metric, stat, w, false).await?;
            let m = Matrix::from_links(&run, &values);
            let scale = Scale::fit(values.iter().map(|v| v.value), label);
            let title = format!("run {}: {} per link, {}", run.id, metric.title(), span(w));
            heatmap::draw_snapshot(&m, &scale, &title, &args.out)?;
        }
        HeatmapKind::Timeline { range, hosts } => {
            let w = run.window(range.from, range.to);
            let values = query::link_values(&store, &run, metric, stat, w, true).await?;
            let t = timeline(&run, &values, w, hosts);
            let scale = Scale::fit(values.iter().map(|v| v.value), label);
            let title = format!("run {}: {} per link over time", run.id, metric.title());
            heatmap::draw_timeline(&t, &scale, &title, &args.out)?;
        }
        HeatmapKind::Frames {
            range,
            step,
            delay_ms,
        } => {
            anyhow::ensure!(step > 0.0, "--step must be positive");
            let whole = run.window(range.from, range.to);
            let (start, end) = (run.seconds(whole.from), run.seconds(whole.to + 1));
            let mut frames = Vec::new();
            let mut all = Vec::new();
            let mut t = start;
            while t < end && frames.len() < 10_000 {
                let w = run.window(Some(t), Some(t + step));
                let values = query::link_values(&store, &run, metric, stat, w, false).await?;
                let title = format!("run {}: {} per link, {}", run.id, metric.title(), span(w));
                frames.push((title, Matrix::from_links(&run, &values)));
                all.extend(values.into_iter().map(|v| v.value));
                t += step;
            }
            let scale = Scale::fit(all, label);
            let files = heatmap::draw_frames(&frames, &scale, &args.out, delay_ms)?;
            tracing::info!("{} frames in {} files", frames.len(), files.len());
        }
    }
    store.close().await;
    println!("{}", args.out.display());
    Ok(())
}

/// Links with data in `w` (switch-to-switch only unless `hosts`), by bucket.
fn timeline(run: &RunInfo, values: &[query::LinkValue], w: query::Window, hosts: bool) -> Timeline {
    let is_switch = |n: &str| run.switches.iter().any(|(s, _)| s == n);
    let mut rows: Vec<u32> = values.iter().map(|v| v.link).collect();
    rows.sort_unstable();
    rows.dedup();
    rows.retain(|&l| {
        run.links
            .get(l as usize)
            .is_some_and(|l| hosts || (is_switch(&l.src) && is_switch(&l.dst)))
    });
    let mut cells = vec![vec![Cell::NoData; w.len()]; rows.len()];
    for v in values {
        if let Ok(r) = rows.binary_search(&v.link) {
            if let Some(c) = cells[r].get_mut((v.bucket - w.from) as usize) {
                *c = Cell::Value(v.value);
            }
        }
    }
    Timeline {
        links: rows
            .iter()
            .map(|&l| run.links[l as usize].to_string())
            .collect(),
        times: (w.from..=w.to).map(|b| run.seconds(b)).collect(),
        bucket_s: run.bucket_ns as f64 / 1e9,
        cells,
    }
}

pub fn run_query(args: QueryArgs) -> anyhow::Result<()> {
    let out = block_on(query_table(args.clone()))?;
    print!("{}", out.render(args.format));
    Ok(())
}

/// The answer to a query, before formatting.
pub async fn query_table(args: QueryArgs) -> anyhow::Result<Table> {
    let (store, run) = open(&args.db).await?;
    let table = match args.what {
        QueryKind::Link {
            link,
            metric,
            range,
        } => {
            let id = run.find_link(&link)?;
            let w = run.window(range.from, range.to);
            let mut t = Table::new(vec!["t", "samples", "min", "mean", "max"]);
            for p in query::link_series(&store, &run, id, metric, w).await? {
                t.push_record(&p);
            }
            t
        }
        QueryKind::Hottest {
            metric: MetricArgs { metric, stat },
            range,
            top,
        } => {
            let w = run.window(range.from, range.to);
            let mut values = query::link_values(&store, &run, metric, stat, w, false).await?;
            values.sort_by(|a, b| b.value.total_cmp(&a.value));
            let mut t = Table::new(vec!["link", "value", "unit"]);
            for v in values.iter().take(top) {
                let name = run
                    .links
                    .get(v.link as usize)
                    .map_or_else(|| v.link.to_string(), |l| l.to_string());
                t.rows
                    .push(vec![name.into(), v.value.into(), metric.unit().into()]);
            }
            t
        }
        QueryKind::Paths(range) => {
            let w = run.window(range.from, range.to);
            let mut t = Table::new(vec![
                "path",
                "probes",
                "lost",
                "loss_pct",
                "duplicates",
                "reordered",
                "e2e_mean_us",
                "e2e_max_us",
            ]);
            for p in query::path_summaries(&store, &run, w).await? {
                t.push_record(&p);
            }
            t
        }
        QueryKind::Rejects => {
            let mut t = Table::new(vec!["reason", "count"]);
            for (reason, n) in query::rejects(&store, &run).await? {
                t.rows.push(vec![reason.into(), n.into()]);
            }
            t
        }
        QueryKind::Runs => {
            let mut t = Table::new(vec!["run", "topology", "plan", "bucket_ms", "probes"]);
            let rows: Vec<(i64, String, String, i64, i64)> = sqlx::query_as(
                "SELECT r.id, r.topology, r.plan_algo, r.bucket_ns / 1000000, \
                 (SELECT COUNT(*) FROM probes p WHERE p.run_id = r.id) FROM runs r ORDER BY r.id",
            )
            .fetch_all(store.pool())
            .await?;
            for (id, topo, algo, bucket, probes) in rows {
                t.rows.push(vec![
                    id.into(),
                    topo.into(),
                    algo.into(),
                    bucket.into(),
                    probes.into(),
                ]);
            }
            t
        }
    };
    store.close().await;
    Ok(table)
}

/// Runs the collector until SIGINT or SIGTERM, then stores everything
/// buffered and closes the database. With `--follow-plan`, a rewritten plan
/// file closes the run and starts a new one on the new plan.
pub async fn run_collect(args: CollectArgs, links: LinkMap) -> anyhow::Result<()> {
    // A misspelt interface fails before a run is created in the database.
    let known = pnet_datalink::interfaces();
    if let Some(bad) = args
        .iface
        .iter()
        .find(|i| !known.iter().any(|k| &k.name == *i))
    {
        return Err(crate::capture::CaptureError::NoInterface(bad.clone()).into());
    }
    let (mut followed, plan) = FollowedPlan::open(&args.plan)?;
    let links = Arc::new(links);
    let opts = Options {
        bucket: Duration::from_millis(args.bucket_ms.max(1)),
        flush_every: Duration::from_millis(args.flush_ms.max(1)),
        ..Options::default()
    };
    let mut c = start_run(&args, links.clone(), &plan, opts.clone()).await?;
    let stop = wait_for_signal();
    tokio::pin!(stop);
    let mut look = tokio::time::interval(Duration::from_millis(500));
    loop {
        tokio::select! {
            r = &mut stop => {
                r.context("cannot wait for signals")?;
                break;
            }
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
    println!("{}", serde_json::to_string(&summary)?);
    Ok(())
}

/// A new run on `plan`, receiving from every source the arguments name.
async fn start_run(
    args: &CollectArgs,
    links: Arc<LinkMap>,
    plan: &Plan,
    opts: Options,
) -> anyhow::Result<Collector> {
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

async fn wait_for_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}

/// The switches and links of a topology spec.
pub fn load_links(spec: &str) -> anyhow::Result<LinkMap> {
    let t = intpath_core::topo::Topology::load(spec)?;
    Ok(LinkMap::from_topology(&t))
}
