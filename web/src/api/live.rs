//! `GET /api/live`: server-sent events. Every tick (a second) the stream
//! looks at how many probes the run holds (`query::path_progress`, one
//! keyed lookup per path) and, when that changed, sends an `update` event:
//! the run's newest [`ServeConfig::live_window_s`] seconds as a heatmap
//! timeline, with the probe count and the newest run's id (so a page
//! following the newest run notices a new one). While the database does not
//! exist yet it sends `waiting` once; a failing read is a `problem` event
//! and the stream goes on.
//!
//! [`ServeConfig::live_window_s`]: crate::ServeConfig::live_window_s

use super::heatmap::{self, Span};
use super::{ApiError, MetricParam};
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use intpath_store::query::{self, RunInfo};
use intpath_store::RunId;
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct LiveParams {
    /// The run to follow (default: the newest, whichever it is at each tick).
    pub run: Option<RunId>,
    #[serde(default)]
    pub metric: MetricParam,
}

/// What the last event said, so that an unchanged store sends nothing.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Nothing,
    Waiting(String),
    Problem(String),
    /// Newest run, run shown, its probes.
    Data(RunId, RunId, i64),
}

struct Follower {
    app: Arc<AppState>,
    params: LiveParams,
    seen: Seen,
    first: bool,
}

pub async fn get(
    State(app): State<Arc<AppState>>,
    Query(params): Query<LiveParams>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let f = Follower {
        app,
        params,
        seen: Seen::Nothing,
        first: true,
    };
    let events = stream::unfold(f, |mut f| async move {
        let mut stopping = f.app.stopping.clone();
        loop {
            if !f.first {
                tokio::select! {
                    _ = tokio::time::sleep(f.app.config.tick) => {}
                    _ = stopping.wait_for(|s| *s) => return None,
                }
            }
            if *stopping.borrow() {
                return None;
            }
            f.first = false;
            if let Some(e) = f.poll().await {
                return Some((Ok(e), f));
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}

impl Follower {
    /// The event to send now, if the store changed since the last one.
    async fn poll(&mut self) -> Option<Event> {
        let (seen, event) = match self.read().await {
            Ok(Some((seen, event))) => (seen, event),
            Ok(None) => return None,
            Err(ApiError::NotYet(why)) => (
                Seen::Waiting(why.clone()),
                Event::default().event("waiting").data(why),
            ),
            Err(e) => (
                Seen::Problem(e.to_string()),
                Event::default().event("problem").data(e.to_string()),
            ),
        };
        if seen == self.seen {
            return None;
        }
        self.seen = seen;
        Some(event)
    }

    async fn read(&self) -> Result<Option<(Seen, Event)>, ApiError> {
        let store = self.app.store().await?;
        let Some((newest, paths)) = query::path_progress(&store).await? else {
            return Err(ApiError::NotYet(format!(
                "{}: no run yet",
                self.app.config.db
            )));
        };
        let run = self.params.run.unwrap_or(newest);
        // The run shown changes only while it is the newest.
        let probes = match run == newest {
            true => paths.iter().filter_map(|p| p.received).sum(),
            false => -1,
        };
        let seen = Seen::Data(newest, run, probes);
        if seen == self.seen {
            return Ok(None);
        }
        let info = RunInfo::load(&store, Some(run)).await?;
        let span = Span::Last(self.app.config.live_window_s);
        let timeline = heatmap::build(&store, &info, self.params.metric.into(), span).await?;
        let data = json!({
            "newest_run": newest,
            "run": run,
            "probes": (probes >= 0).then_some(probes),
            "heatmap": timeline,
        });
        let event = Event::default()
            .event("update")
            .json_data(data)
            .map_err(|e| ApiError::Internal(format!("cannot encode an update: {e}")))?;
        Ok(Some((seen, event)))
    }
}
