//! `GET /api/link`: one link in detail (what a click on a heatmap row or a
//! topology edge opens): its queue depth, queueing delay and loss bucket by
//! bucket. `GET /api/paths`: every probe path's probes, loss and
//! end-to-end delay over a range.

use super::{ApiError, Params};
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::Json;
use intpath_store::query::{self, Metric, PathSummary, RunInfo, SeriesPoint};
use intpath_store::RunId;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Clone, Deserialize)]
pub struct LinkParams {
    pub run: Option<RunId>,
    /// `SRC:PORT->DST`, `SRC:PORT` or `SRC->DST`.
    pub link: String,
    pub from: Option<f64>,
    pub to: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub metric: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    pub points: Vec<SeriesPoint>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkDetail {
    pub run: RunId,
    pub link: u32,
    pub name: String,
    pub series: Vec<Series>,
}

pub async fn get(
    State(app): State<Arc<AppState>>,
    Query(p): Query<LinkParams>,
) -> Result<Json<LinkDetail>, ApiError> {
    let store = app.store().await?;
    let info = RunInfo::load(&store, p.run).await?;
    // The page names links as they print (`s1:2->s2`); users may also give
    // `SRC:PORT` or `SRC->DST`.
    let link = match info.links.iter().position(|l| l.to_string() == p.link) {
        Some(i) => i as u32,
        None => info.find_link(&p.link)?,
    };
    let mut series = Vec::new();
    if info.buckets.is_some() {
        let w = info.window(p.from, p.to)?;
        for metric in [Metric::Qdepth, Metric::Qdelay, Metric::Loss] {
            series.push(Series {
                metric: metric.name(),
                title: metric.title(),
                unit: metric.unit(),
                points: query::link_series(&store, &info, link, metric, w).await?,
            });
        }
    }
    Ok(Json(LinkDetail {
        run: info.id,
        link,
        name: info.links[link as usize].to_string(),
        series,
    }))
}

#[derive(Debug, Clone, Serialize)]
pub struct Paths {
    pub run: RunId,
    pub paths: Vec<PathSummary>,
}

pub async fn paths(
    State(app): State<Arc<AppState>>,
    Query(p): Query<Params>,
) -> Result<Json<Paths>, ApiError> {
    let store = app.store().await?;
    let info = RunInfo::load(&store, p.run).await?;
    let paths = match info.buckets {
        Some(_) => query::path_summaries(&store, &info, info.window(p.from, p.to)?).await?,
        None => Vec::new(),
    };
    Ok(Json(Paths {
        run: info.id,
        paths,
    }))
}
