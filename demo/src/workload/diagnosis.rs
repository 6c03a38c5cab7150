//! The culprits of a diagnosis, as `intpath diagnose culprits` and the
//! workload demo both get them: one diagnosis, one ranking, and the
//! heatmaps with the blamed links outlined. Self-contained (the diagnosis
//! library and the collector's heatmaps only), so that it can move into
//! `intpath-diagnose` whole.

use anyhow::{Context, Result};
use intpath_diagnose::culprits::{blamed_links, rank, Culprit, Method};
use intpath_diagnose::path::HostPath;
use intpath_diagnose::{diagnose, DiagnoseError, Diagnosis, Request};
use intpath_plot::heatmap::{render_outlined, HeatmapKind, HeatmapRequest};
use intpath_store::query::{Metric, Stat, TimeRange};
use intpath_store::Db;
use std::path::Path;

/// Diagnoses `request`, each kind of rejected span or edge logged once as
/// a warning with its count and first example.
pub fn diagnosed(request: Request) -> Result<Diagnosis, DiagnoseError> {
    let dg = diagnose(request)?;
    for (reason, n, example) in dg.rejects.iter() {
        tracing::warn!(
            "rejected {n}: {reason}{}",
            example
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default()
        );
    }
    Ok(dg)
}

/// The diagnosis of `request` and its culprits ranked by `method`; with
/// `heatmap`, the queueing-delay heatmaps (`snapshot.png`,
/// `timeline.png`) drawn into that directory, the top link culprits' cells
/// outlined.
pub fn culprits(
    request: Request,
    method: Method,
    heatmap: Option<&Path>,
) -> Result<(Diagnosis, Vec<Culprit>)> {
    let db = request.db.clone();
    let dg = diagnosed(request)?;
    let paths: Vec<Option<&HostPath>> = dg.paths.iter().map(Some).collect();
    let hosts = dg.host_names();
    let ranking = rank(&dg.ranking_inputs(&paths, &hosts), method);
    if let Some(dir) = heatmap {
        outlined_heatmaps(&dg, &ranking, db, dir)?;
    }
    Ok((dg, ranking))
}

/// Link culprits among the top three, drawn with their cells outlined.
fn outlined_heatmaps(dg: &Diagnosis, ranking: &[Culprit], db: Db, dir: &Path) -> Result<()> {
    let links = blamed_links(ranking, &dg.topo, 3);
    std::fs::create_dir_all(dir).with_context(|| format!("--heatmap {}", dir.display()))?;
    let all = TimeRange {
        from: None,
        to: None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    for (name, kind) in [
        ("snapshot.png", HeatmapKind::Snapshot(all)),
        (
            "timeline.png",
            HeatmapKind::Timeline {
                range: all,
                hosts: false,
            },
        ),
    ] {
        let req = HeatmapRequest {
            db: db.clone(),
            run: None,
            metric: Metric::Qdelay,
            stat: Stat::Mean,
            out: dir.join(name),
            kind,
        };
        rt.block_on(render_outlined(&req, &links))?;
        eprintln!(
            "wrote {} ({} culprit links outlined)",
            req.out.display(),
            links.len()
        );
    }
    Ok(())
}
