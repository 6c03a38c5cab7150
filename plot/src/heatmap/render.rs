//! Heatmaps straight from a telemetry database: what `intpath heatmap`, the
//! demo and a diagnosis call, with typed arguments.

use super::{draw, draw_frames, Cell, HeatmapError, Matrix, Outline, Scale, Timeline};
use intpath_core::link::DirLink;
use intpath_store::query::{self, Metric, QueryError, RunInfo, Stat, TimeRange, Window};
use intpath_store::{Db, RunId, Store};
use std::path::PathBuf;

/// Most snapshots one frame series may hold.
pub const MAX_FRAMES: usize = 10_000;
/// Most columns one timeline shows; a longer range merges buckets.
pub const MAX_TIMELINE_COLUMNS: usize = 20_000;

/// Which heatmap to draw, from which run, into which file.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatmapRequest {
    pub db: Db,
    /// `None`: the newest run.
    pub run: Option<RunId>,
    pub metric: Metric,
    /// How samples in a window or bucket are summarised (not for loss).
    pub stat: Stat,
    /// PNG, or SVG for `.svg`; frames: a `.gif` file or a directory.
    pub out: PathBuf,
    pub kind: HeatmapKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HeatmapKind {
    /// Switch × switch matrix, each link coloured by its metric over a window.
    Snapshot(TimeRange),
    /// Links × time buckets; `hosts` adds links to and from hosts.
    Timeline { range: TimeRange, hosts: bool },
    /// One snapshot per `step_s` over a range, on one colour scale.
    Frames {
        range: TimeRange,
        step_s: f64,
        delay_ms: u32,
    },
}

/// Draws the heatmap `req` asks for; returns the files written.
pub async fn render(req: &HeatmapRequest) -> Result<Vec<PathBuf>, HeatmapError> {
    render_outlined(req, &[]).await
}

/// [`render`] with the cells of `outlined` links framed (a snapshot's link
/// cell, a timeline's link row): how a diagnosis points at its culprits.
/// Frames are drawn without outlines.
pub async fn render_outlined(
    req: &HeatmapRequest,
    outlined: &[DirLink],
) -> Result<Vec<PathBuf>, HeatmapError> {
    let store = Store::open_existing(&req.db)
        .await
        .map_err(QueryError::from)?;
    let out = query_and_draw(&store, req, outlined).await;
    store.close().await;
    out
}

/// The queueing-delay heatmaps of run `run` in `db` (`snapshot.png` and
/// `timeline.png` in `dir`) with the cells of `culprits` framed: what a
/// diagnosis draws to point at the links it blames.
pub async fn culprit_heatmaps(
    db: &Db,
    run: Option<RunId>,
    culprits: &[DirLink],
    dir: &std::path::Path,
) -> Result<Vec<PathBuf>, HeatmapError> {
    std::fs::create_dir_all(dir).map_err(|e| HeatmapError::Io(dir.to_owned(), e))?;
    let all = TimeRange {
        from: None,
        to: None,
    };
    let mut written = Vec::new();
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
            run,
            metric: Metric::Qdelay,
            stat: Stat::Mean,
            out: dir.join(name),
            kind,
        };
        written.extend(render_outlined(&req, culprits).await?);
    }
    Ok(written)
}

async fn query_and_draw(
    store: &Store,
    req: &HeatmapRequest,
    outlined: &[DirLink],
) -> Result<Vec<PathBuf>, HeatmapError> {
    let run = RunInfo::load(store, req.run).await?;
    let (metric, stat) = (req.metric, req.stat);
    let span = |w: Window| {
        let (from, to) = (run.seconds(w.from), run.seconds(w.to + 1));
        format!("{}–{} s", super::seconds(from), super::seconds(to))
    };
    match req.kind {
        HeatmapKind::Snapshot(r) => {
            let w = run.window(r.from, r.to)?;
            let values = query::link_values(store, &run, metric, stat, w, false).await?;
            // Loss without port counters is a picture of "no data", not an error.
            if values.is_empty() && metric != Metric::Loss {
                return Err(no_data(&run, w).into());
            }
            let m = Matrix::from_links(&run, &values);
            let scale = Scale::for_metric(values.iter().map(|v| v.value), metric, stat);
            let title = format!("run {}: {} per link, {}", run.id, metric.title(), span(w));
            let outline: Vec<Outline> = outlined
                .iter()
                .filter_map(|l| m.cell_of(&l.src, &l.dst))
                .map(|(r, c)| Outline::cell(r, c))
                .collect();
            draw(&m, &scale, &title, &req.out, &outline)?;
            Ok(vec![req.out.clone()])
        }
        HeatmapKind::Timeline { range, hosts } => {
            let (t, values) = timeline(store, &run, metric, stat, range, hosts).await?;
            let scale = Scale::for_metric(values, metric, stat);
            let title = format!("run {}: {} per link over time", run.id, metric.title());
            let outline: Vec<Outline> = outlined
                .iter()
                .filter_map(|l| t.links.iter().position(|x| *x == l.to_string()))
                .map(|r| Outline {
                    rows: (r, r + 1),
                    cols: (0, t.times.len()),
                })
                .collect();
            draw(&t, &scale, &title, &req.out, &outline)?;
            Ok(vec![req.out.clone()])
        }
        HeatmapKind::Frames {
            range,
            step_s,
            delay_ms,
        } => {
            let whole = run.window(range.from, range.to)?;
            let (start, end) = (run.seconds(whole.from), run.seconds(whole.to + 1));
            if !(step_s.is_finite() && step_s > 0.0) {
                return Err(QueryError::Range(format!(
                    "--step {step_s} must be a positive number of seconds"
                ))
                .into());
            }
            let n = ((end - start) / step_s).ceil();
            if n > MAX_FRAMES as f64 {
                return Err(QueryError::Range(format!(
                    "--step {step_s} s cuts {:.1} s into {n:.0} frames; at most {MAX_FRAMES}",
                    end - start
                ))
                .into());
            }
            let mut frames = Vec::new();
            let mut all = Vec::new();
            for i in 0..n as usize {
                let t = start + i as f64 * step_s;
                let w = run.window(Some(t), Some(t + step_s))?;
                let values = query::link_values(store, &run, metric, stat, w, false).await?;
                let title = format!("run {}: {} per link, {}", run.id, metric.title(), span(w));
                frames.push((title, Matrix::from_links(&run, &values)));
                all.extend(values.into_iter().map(|v| v.value));
            }
            if all.is_empty() {
                return Err(no_data(&run, whole).into());
            }
            let scale = Scale::for_metric(all, metric, stat);
            let files = draw_frames(&frames, &scale, &req.out, delay_ms)?;
            tracing::info!("{} frames in {} files", frames.len(), files.len());
            Ok(files)
        }
    }
}

fn no_data(run: &RunInfo, w: Window) -> QueryError {
    QueryError::NoData {
        run: run.id,
        from: run.seconds(w.from),
        to: run.seconds(w.to + 1),
    }
}

/// Links with data in `range` (switch-to-switch only unless `hosts`), by
/// bucket, and every value shown (for the colour scale).
pub async fn timeline(
    store: &Store,
    run: &RunInfo,
    metric: Metric,
    stat: Stat,
    range: TimeRange,
    hosts: bool,
) -> Result<(Timeline, Vec<f64>), QueryError> {
    let w = run.window(range.from, range.to)?;
    // However long the range, at most MAX_TIMELINE_COLUMNS columns: wider
    // ones merge neighbouring buckets.
    let width = w.len().div_ceil(MAX_TIMELINE_COLUMNS).max(1);
    let columns = w.len().div_ceil(width);
    if width > 1 {
        tracing::info!(
            "{} buckets in the range: {width} buckets per column",
            w.len()
        );
    }
    let values = query::link_columns(store, run, metric, stat, w, width as i64).await?;
    let is_switch = |n: &str| run.switches.iter().any(|(s, _)| s == n);
    let mut rows: Vec<u32> = values.iter().map(|v| v.link).collect();
    rows.sort_unstable();
    rows.dedup();
    rows.retain(|&l| {
        run.links
            .get(l as usize)
            .is_some_and(|l| hosts || (is_switch(&l.src) && is_switch(&l.dst)))
    });
    if rows.is_empty() {
        return Err(no_data(run, w));
    }
    let mut cells = vec![vec![Cell::NoData; columns]; rows.len()];
    for v in &values {
        if let Ok(r) = rows.binary_search(&v.link) {
            let col = (v.bucket - w.from) / width as i64;
            if let Some(c) = cells[r].get_mut(col as usize) {
                *c = Cell::Value(v.value);
            }
        }
    }
    let links: Vec<&DirLink> = rows.iter().map(|&l| &run.links[l as usize]).collect();
    let t = Timeline {
        links: links.iter().map(|l| l.to_string()).collect(),
        shown: links
            .iter()
            .map(|l| match run.link_label(l) {
                Some(label) => format!("{l} {label}"),
                None => l.to_string(),
            })
            .collect(),
        times: (0..columns)
            .map(|c| run.seconds(w.from + (c * width) as i64))
            .collect(),
        bucket_s: (width as i64).saturating_mul(run.bucket_ns) as f64 / 1e9,
        cells,
    };
    Ok((t, values.into_iter().map(|v| v.value).collect()))
}
