//! `GET /api/heatmap`: links × time, one row per directed link and at most
//! [`MAX_COLUMNS`] columns (a long run's buckets are merged into wider
//! columns, as the PNG heatmaps do); `GET /api/snapshot`: switch × switch,
//! one value per link over the range. Both in the run's own time frame
//! (seconds after its first probe), from `intpath_store::query`.

use super::{ApiError, Params};
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::Json;
use intpath_store::query::{self, Metric, RunInfo, Stat};
use intpath_store::{RunId, Store};
use serde::Serialize;
use std::sync::Arc;

/// Columns a timeline is drawn in at most: about a pixel each.
pub const MAX_COLUMNS: usize = 600;

/// One row of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub link: u32,
    pub name: String,
    /// Mean of the row's measured columns; `None` when none was measured.
    pub mean: Option<f64>,
    pub max: Option<f64>,
    /// One value per column; `None`: no probe crossed the link then.
    pub values: Vec<Option<f64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub run: RunId,
    pub metric: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    /// Start of the first column and width of each, seconds.
    pub t0: f64,
    pub column_s: f64,
    pub columns: usize,
    /// End of the run's newest bucket, seconds (`None`: no telemetry yet).
    pub end_s: Option<f64>,
    pub rows: Vec<Row>,
}

/// What part of the run a timeline covers.
#[derive(Debug, Clone, Copy)]
pub enum Span {
    /// From, to (seconds; `None`: the run's start, end).
    Range(Option<f64>, Option<f64>),
    /// The newest this many seconds.
    Last(f64),
}

pub async fn timeline(
    State(app): State<Arc<AppState>>,
    Query(p): Query<Params>,
) -> Result<Json<Timeline>, ApiError> {
    let store = app.store().await?;
    let info = RunInfo::load(&store, p.run).await?;
    let span = Span::Range(p.from, p.to);
    Ok(Json(build(&store, &info, p.metric.into(), span).await?))
}

/// The timeline of `info`'s run over `span`.
pub async fn build(
    store: &Store,
    info: &RunInfo,
    metric: Metric,
    span: Span,
) -> Result<Timeline, ApiError> {
    let end_s = info.buckets.map(|(_, hi)| info.seconds(hi + 1));
    let mut t = Timeline {
        run: info.id,
        metric: metric.name(),
        title: metric.title(),
        unit: metric.unit(),
        t0: 0.0,
        column_s: info.bucket_ns as f64 / 1e9,
        columns: 0,
        end_s,
        rows: Vec::new(),
    };
    let (Some((lo, _)), Some(end)) = (info.buckets, end_s) else {
        return Ok(t);
    };
    let (from, to) = match span {
        Span::Range(from, to) => (from, to),
        Span::Last(s) => (Some(end - s).filter(|&f| f > info.seconds(lo)), None),
    };
    let w = info.window(from, to)?;
    if w.is_empty() {
        return Ok(t);
    }
    let width = w.len().div_ceil(MAX_COLUMNS).max(1) as i64;
    let columns = w.len().div_ceil(width as usize);
    let values = query::link_columns(store, info, metric, Stat::Mean, w, width).await?;
    let mut rows: Vec<Row> = info
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| Row {
            link: i as u32,
            name: l.to_string(),
            mean: None,
            max: None,
            values: vec![None; columns],
        })
        .collect();
    for v in values {
        let col = ((v.bucket - w.from) / width) as usize;
        if let Some(cell) = rows
            .get_mut(v.link as usize)
            .and_then(|r| r.values.get_mut(col))
        {
            *cell = Some(v.value);
        }
    }
    for r in &mut rows {
        let measured: Vec<f64> = r.values.iter().flatten().copied().collect();
        if !measured.is_empty() {
            r.mean = Some(measured.iter().sum::<f64>() / measured.len() as f64);
            r.max = measured.iter().copied().reduce(f64::max);
        }
    }
    t.t0 = info.seconds(w.from);
    t.column_s = width as f64 * info.bucket_ns as f64 / 1e9;
    t.columns = columns;
    t.rows = rows;
    Ok(t)
}

/// One cell of the switch × switch snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub src: String,
    pub dst: String,
    pub link: u32,
    pub name: String,
    pub value: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    pub run: RunId,
    pub metric: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    /// Rows and columns, in the run's switch order.
    pub switches: Vec<String>,
    pub cells: Vec<Cell>,
}

pub async fn snapshot(
    State(app): State<Arc<AppState>>,
    Query(p): Query<Params>,
) -> Result<Json<Snapshot>, ApiError> {
    let store = app.store().await?;
    let info = RunInfo::load(&store, p.run).await?;
    let metric: Metric = p.metric.into();
    let switches: Vec<String> = info.switches.iter().map(|(n, _)| n.clone()).collect();
    let mut cells = Vec::new();
    if info.buckets.is_some() {
        let w = info.window(p.from, p.to)?;
        for v in query::link_values(&store, &info, metric, Stat::Mean, w, false).await? {
            let Some(l) = info.links.get(v.link as usize) else {
                continue;
            };
            if switches.contains(&l.src) && switches.contains(&l.dst) {
                cells.push(Cell {
                    src: l.src.clone(),
                    dst: l.dst.clone(),
                    link: v.link,
                    name: l.to_string(),
                    value: v.value,
                });
            }
        }
    }
    cells.sort_by_key(|c| c.link);
    Ok(Json(Snapshot {
        run: info.id,
        metric: metric.name(),
        title: metric.title(),
        unit: metric.unit(),
        switches,
        cells,
    }))
}
