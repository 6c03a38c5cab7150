//! The JSON API behind the page. Every answer is read from the store (or
//! computed by the diagnosis) when asked; a database that does not exist
//! yet, a run without probes or a run without spans are answers (200, said
//! in the body), not errors, so a page watching a run that is starting logs
//! nothing red. Errors are for requests that cannot be answered: a run or
//! link that is not there (404), a bad parameter (400), a store that fails
//! (500), each a JSON object `{"error": "one line"}`.

pub mod diagnosis;
pub mod heatmap;
pub mod link;
pub mod live;
pub mod runs;
pub mod topology;

use crate::state::AppState;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use intpath_store::query::{self, QueryError};
use intpath_store::{RunId, StoreError};
use serde::Deserialize;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/runs", get(runs::get))
        .route("/api/heatmap", get(heatmap::timeline))
        .route("/api/snapshot", get(heatmap::snapshot))
        .route("/api/topology", get(topology::get))
        .route("/api/link", get(link::get))
        .route("/api/paths", get(link::paths))
        .route("/api/diagnosis", get(diagnosis::get))
        .route("/api/live", get(live::get))
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The database is not there yet: a collector has not created it.
    #[error("{0}")]
    NotYet(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Internal(String),
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        ApiError::Internal(e.to_string())
    }
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> Self {
        match e {
            QueryError::NoRuns | QueryError::NoRun(_) | QueryError::NoLink(..) => {
                ApiError::NotFound(e.to_string())
            }
            QueryError::Range(_) => ApiError::BadRequest(e.to_string()),
            QueryError::Store(s) => s.into(),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = match self {
            ApiError::NotYet(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::warn!("{self}");
        }
        let body = serde_json::json!({ "error": self.to_string() });
        (status, Json(body)).into_response()
    }
}

/// `?metric=qdepth|qdelay|loss` (default: queue depth).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricParam {
    #[default]
    Qdepth,
    Qdelay,
    Loss,
}

impl From<MetricParam> for query::Metric {
    fn from(m: MetricParam) -> Self {
        match m {
            MetricParam::Qdepth => query::Metric::Qdepth,
            MetricParam::Qdelay => query::Metric::Qdelay,
            MetricParam::Loss => query::Metric::Loss,
        }
    }
}

/// The parameters most answers take: which run (default: the newest),
/// which metric, and a time range in seconds after the run's first probe.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Params {
    pub run: Option<RunId>,
    #[serde(default)]
    pub metric: MetricParam,
    pub from: Option<f64>,
    pub to: Option<f64>,
}
