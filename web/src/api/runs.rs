//! `GET /api/runs`: every run in the database, oldest first; an empty list
//! with the reason while the database does not exist yet.

use super::ApiError;
use crate::state::AppState;
use axum::extract::State;
use axum::Json;
use intpath_store::query;
use serde_json::{json, Value};
use std::sync::Arc;

pub async fn get(State(app): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let db = app.config.db.to_string();
    let store = match app.store().await {
        Ok(s) => s,
        Err(ApiError::NotYet(why)) => {
            return Ok(Json(json!({ "db": db, "runs": [], "waiting": why })))
        }
        Err(e) => return Err(e),
    };
    let runs = query::runs(&store).await?;
    Ok(Json(json!({ "db": db, "runs": runs, "waiting": null })))
}
