//! Flags `heatmap` and `query` both take: which database and run to read, a
//! time range, and a metric with its summary.

use clap::{Args, ValueEnum};
use intpath_store::query::{self, TimeRange};
use intpath_store::{Db, RunId};

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
    /// Packets the link's sender sent and its receiver did not receive,
    /// from the switches' port counters (%); path loss: `query paths`.
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

#[derive(Debug, Clone, Args)]
pub struct MetricArgs {
    #[arg(long, value_enum, default_value_t = Metric::Qdepth)]
    pub metric: Metric,
    /// How samples in a window or bucket are summarised (not for loss).
    #[arg(long, value_enum, default_value_t = Stat::Mean)]
    pub stat: Stat,
}
