//! The pictures a demo run leaves: queue depth over time and per link,
//! queueing delay over time, and loss per link.

use anyhow::Result;
use intpath_plot::heatmap::{self, HeatmapKind, HeatmapRequest};
use intpath_store::query::{Metric, Stat, TimeRange};
use intpath_store::{Db, RunId};
use std::path::{Path, PathBuf};

/// Draws the run's heatmaps into `out` (`heatmap-{timeline,snapshot}-METRIC.png`)
/// and returns their paths.
pub async fn render_all(db: &Db, run: RunId, out: &Path) -> Result<Vec<PathBuf>> {
    let timeline = HeatmapKind::Timeline {
        range: TimeRange::default(),
        hosts: false,
    };
    let snapshot = HeatmapKind::Snapshot(TimeRange::default());
    let mut drawn = Vec::new();
    for (metric, kind) in [
        (Metric::Qdepth, timeline),
        (Metric::Qdepth, snapshot),
        (Metric::Qdelay, timeline),
        (Metric::Loss, snapshot),
    ] {
        let name = match kind {
            HeatmapKind::Timeline { .. } => "timeline",
            _ => "snapshot",
        };
        let req = HeatmapRequest {
            db: db.clone(),
            run: Some(run),
            metric,
            stat: Stat::Mean,
            out: out.join(format!("heatmap-{name}-{}.png", metric.name())),
            kind,
        };
        heatmap::render(&req).await?;
        drawn.push(req.out);
    }
    Ok(drawn)
}
