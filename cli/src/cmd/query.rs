//! `intpath query link|hottest|paths|rejects|runs`: the telemetry store's
//! answers (`intpath_store::report`) as a table, JSON or CSV.

use super::telemetry::{DbArgs, Metric, MetricArgs, RangeArgs};
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use intpath_store::report::{self, Question};
use intpath_store::table;

/// Ask the telemetry store: link metrics, hottest links, paths, rejects.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
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

#[derive(Debug, Clone, Subcommand)]
enum What {
    /// One link's metric per time bucket (min, mean, max).
    Link {
        /// `SRC:PORT->DST` (as every output prints it), `SRC:PORT` or
        /// `SRC->DST`.
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

impl From<What> for Question {
    fn from(q: What) -> Self {
        match q {
            What::Link {
                link,
                metric,
                range,
            } => Question::Link {
                link,
                metric: metric.into(),
                range: range.into(),
            },
            What::Hottest { metric, range, top } => Question::Hottest {
                metric: metric.metric.into(),
                stat: metric.stat.into(),
                range: range.into(),
                top,
            },
            What::Paths(range) => Question::Paths(range.into()),
            What::Rejects => Question::Rejects,
            What::Runs => Question::Runs,
        }
    }
}

pub fn run(a: Args) -> Result<()> {
    let q = Question::from(a.what);
    let answer = report::answer(&a.db.db, a.db.run, &q);
    let table = super::runtime()?.block_on(answer)?;
    super::emit(None, &table.render(a.format.into()))
}
