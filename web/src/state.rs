//! What every request shares: the store, opened read-only once it exists,
//! and the last diagnosis (tens of seconds of work on a large run).

use crate::api::ApiError;
use crate::config::ServeConfig;
use intpath_store::{RunId, Store, StoreError};
use serde_json::Value;
use std::time::Instant;
use tokio::sync::Mutex;

pub struct AppState {
    pub config: ServeConfig,
    store: Mutex<Option<Store>>,
    /// Held while a diagnosis is computed, so that two pages asking at once
    /// do the work once.
    pub diagnosis: Mutex<Option<CachedDiagnosis>>,
    /// Turns true when the server stops: live streams end, so that the
    /// server's graceful shutdown is not held by pages left open.
    pub stopping: tokio::sync::watch::Receiver<bool>,
}

/// A diagnosis answer and what it was computed from.
pub struct CachedDiagnosis {
    pub run: Option<RunId>,
    /// The run's probes when it was computed: more probes, a live run.
    pub probes: i64,
    pub at: Instant,
    pub answer: Value,
}

impl AppState {
    pub fn new(config: ServeConfig, stopping: tokio::sync::watch::Receiver<bool>) -> Self {
        AppState {
            config,
            store: Mutex::new(None),
            diagnosis: Mutex::new(None),
            stopping,
        }
    }

    /// The store; [`ApiError::NotYet`] while the database does not exist
    /// or has no schema yet (a collector about to create it).
    pub async fn store(&self) -> Result<Store, ApiError> {
        let mut slot = self.store.lock().await;
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        match Store::open_existing(self.config.db.clone()).await {
            Ok(s) => {
                tracing::info!("{}: opened read-only", self.config.db);
                *slot = Some(s.clone());
                Ok(s)
            }
            Err(e @ (StoreError::Missing(_) | StoreError::NotTelemetry(_))) => {
                Err(ApiError::NotYet(e.to_string()))
            }
            Err(e) => Err(e.into()),
        }
    }

    pub async fn close(&self) {
        if let Some(s) = self.store.lock().await.take() {
            s.close().await;
        }
    }
}
