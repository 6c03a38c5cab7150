//! `intpath heatmap snapshot|timeline|frames`: telemetry heatmaps drawn
//! from the collector's database by `intpath-plot`.

use super::telemetry::{DbArgs, MetricArgs, RangeArgs};
use anyhow::Result;
use clap::Subcommand;
use intpath_plot::heatmap::{self, HeatmapKind, HeatmapRequest};
use std::path::PathBuf;

/// Draw telemetry heatmaps (PNG; SVG for `.svg`, animated GIF for `.gif`).
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    metric: MetricArgs,
    /// Output file (frames: a `.gif` file or a directory for numbered PNGs).
    #[arg(short, long)]
    out: PathBuf,
    #[command(subcommand)]
    kind: Kind,
}

#[derive(Debug, Clone, Subcommand)]
enum Kind {
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

impl From<Args> for HeatmapRequest {
    fn from(a: Args) -> Self {
        HeatmapRequest {
            db: a.db.db,
            run: a.db.run,
            metric: a.metric.metric.into(),
            stat: a.metric.stat.into(),
            out: a.out,
            kind: match a.kind {
                Kind::Snapshot(r) => HeatmapKind::Snapshot(r.into()),
                Kind::Timeline { range, hosts } => HeatmapKind::Timeline {
                    range: range.into(),
                    hosts,
                },
                Kind::Frames {
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

pub fn run(a: Args) -> Result<()> {
    let req = HeatmapRequest::from(a);
    super::runtime()?.block_on(heatmap::render(&req))?;
    println!("{}", req.out.display());
    Ok(())
}
