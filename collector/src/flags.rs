//! Command-line flags of `heatmap` and `query`, and their mapping onto the
//! library's typed requests ([`HeatmapRequest`], [`Question`]). The
//! `intpath-collector` and `intpath` binaries both offer these commands and
//! take their flags from here, so the two cannot drift apart. Only built with
//! the `cli` feature: the library proper takes typed values and knows no
//! clap.

use crate::heatmap::{self, HeatmapKind, HeatmapRequest};
use crate::query::{self, TimeRange};
use crate::report::{self, Question};
use crate::store::{Db, RunId};
use crate::table;
use clap::{Args, Subcommand, ValueEnum};
use std::future::Future;
use std::path::PathBuf;

/// Which database and run to read.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// Telemetry database written by the collector: a SQLite file or a
    /// `postgres://` URL.
    #[arg(long, default_value = "telemetry.db")]
    pub db: Db,
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

impl From<RangeArgs> for TimeRange {
    fn from(r: RangeArgs) -> Self {
        TimeRange {
            from: r.from,
            to: r.to,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Metric {
    /// Egress queue depth when the probe was enqueued (packets).
    Qdepth,
    /// Time the probe waited in the egress queue (µs).
    Qdelay,
    /// Probes lost on the paths crossing the link (%).
    Loss,
}

impl From<Metric> for query::Metric {
    fn from(m: Metric) -> Self {
        match m {
            Metric::Qdepth => query::Metric::Qdepth,
            Metric::Qdelay => query::Metric::Qdelay,
            Metric::Loss => query::Metric::Loss,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Stat {
    Mean,
    Max,
    Min,
}

impl From<Stat> for query::Stat {
    fn from(s: Stat) -> Self {
        match s {
            Stat::Mean => query::Stat::Mean,
            Stat::Max => query::Stat::Max,
            Stat::Min => query::Stat::Min,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

impl From<Format> for table::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Table => table::Format::Table,
            Format::Json => table::Format::Json,
            Format::Csv => table::Format::Csv,
        }
    }
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
    pub kind: HeatmapCmd,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HeatmapCmd {
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

impl From<HeatmapArgs> for HeatmapRequest {
    fn from(a: HeatmapArgs) -> Self {
        HeatmapRequest {
            db: a.db.db,
            run: a.db.run,
            metric: a.metric.metric.into(),
            stat: a.metric.stat.into(),
            out: a.out,
            kind: match a.kind {
                HeatmapCmd::Snapshot(r) => HeatmapKind::Snapshot(r.into()),
                HeatmapCmd::Timeline { range, hosts } => HeatmapKind::Timeline {
                    range: range.into(),
                    hosts,
                },
                HeatmapCmd::Frames {
                    range,
                    step,
                    delay_ms,
                } => HeatmapKind::Frames {
                    range: range.into(),
                    step_s: step,
                    delay_ms,
                },
            },
        }
    }
}

/// Ask the telemetry store: link metrics, hottest links, paths, rejects.
#[derive(Debug, Clone, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(subcommand)]
    pub what: QueryCmd,
}

#[derive(Debug, Clone, Subcommand)]
pub enum QueryCmd {
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

impl From<QueryCmd> for Question {
    fn from(q: QueryCmd) -> Self {
        match q {
            QueryCmd::Link {
                link,
                metric,
                range,
            } => Question::Link {
                link,
                metric: metric.into(),
                range: range.into(),
            },
            QueryCmd::Hottest { metric, range, top } => Question::Hottest {
                metric: metric.metric.into(),
                stat: metric.stat.into(),
                range: range.into(),
                top,
            },
            QueryCmd::Paths(range) => Question::Paths(range.into()),
            QueryCmd::Rejects => Question::Rejects,
            QueryCmd::Runs => Question::Runs,
        }
    }
}

/// Runs `fut` on a runtime of its own, on a thread of its own, so that it
/// works whether or not the caller is inside a tokio runtime.
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

pub fn run_heatmap(args: HeatmapArgs) -> anyhow::Result<()> {
    let req = HeatmapRequest::from(args);
    block_on(async { Ok(heatmap::render(&req).await?) })?;
    println!("{}", req.out.display());
    Ok(())
}

pub fn run_query(args: QueryArgs) -> anyhow::Result<()> {
    let (db, run, format) = (args.db.db, args.db.run, args.format);
    let q = Question::from(args.what);
    let table = block_on(async { Ok(report::answer(&db, run, &q).await?) })?;
    print!("{}", table.render(format.into()));
    Ok(())
}
