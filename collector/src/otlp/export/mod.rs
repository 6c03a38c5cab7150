//! The receiver's continuous export (`receive --export-otlp URL`): the
//! traces it received, diagnosed and sent on to an OTLP/HTTP backend with
//! the same span attributes and events as `intpath diagnose --export-otlp`
//! (`intpath_diagnose::export` builds and posts them).
//!
//! Every `every` a round runs:
//! 1. The spans stored since the last round are read back. A trace is
//!    ready once none of its spans arrived for `quiet`; a trace still
//!    receiving spans waits.
//! 2. The ready traces are diagnosed together with the spans that started
//!    up to `context` before them (the calls their baselines compare to),
//!    with the INT of the collector run they overlap, as `intpath diagnose
//!    --db` does; from the traces alone when the database holds no run, or
//!    none of their calls lies in its time.
//! 3. Their spans not sent before are queued, and the queue is posted.
//!
//! Each span is sent once: a span arriving after its trace went out (later
//! than `quiet`) is sent alone in a later round, never the others again.
//! Spans stored before the receiver started are not sent. A backend that is
//! down or refuses costs one log line a round; the unsent batches are held
//! (at most `max_held` spans, the oldest given up beyond) and posted first
//! in the next round. The spans are in the database whatever the backend
//! does. When the receiver stops, a last round takes every trace stored,
//! quiet or not.

mod tracker;

use intpath_diagnose::export::{self, Batch, Client, Endpoint, ExportError};
use intpath_diagnose::{DiagnoseError, Options, Request, SpanWindow};
use intpath_store::{Db, Store, StoreError};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tracker::{Pick, Tracker};

/// Where and how often to export.
#[derive(Debug, Clone)]
pub struct ExportConfig {
    pub endpoint: Endpoint,
    /// Time between rounds.
    pub every: Duration,
    /// A trace is diagnosed once none of its spans arrived for this long.
    pub quiet: Duration,
    /// Spans that started up to this long before a round's traces are
    /// diagnosed with them (not sent): what "normal" is for their calls.
    pub context: Duration,
    /// Most spans held for a backend that does not take them; beyond it
    /// the oldest batches are given up.
    pub max_held: usize,
}

impl ExportConfig {
    /// Every 10 s, traces quiet for 10 s, a minute of context, at most
    /// 100 000 spans held.
    pub fn new(endpoint: Endpoint) -> Self {
        ExportConfig {
            endpoint,
            every: Duration::from_secs(10),
            quiet: Duration::from_secs(10),
            context: Duration::from_secs(60),
            max_held: 100_000,
        }
    }
}

/// What the export did over the receiver's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExportSummary {
    /// Spans the backend acknowledged and did not reject.
    pub spans_exported: u64,
    /// Spans the backend rejected or refused for good, given up past the
    /// hold limit, or still held when the receiver stopped.
    pub spans_failed: u64,
    /// Spans of ready traces not sent because they could not be diagnosed
    /// (no RPC among them, ids that are not OTLP's hexadecimal).
    pub spans_undiagnosed: u64,
    /// Rounds that logged a failure.
    pub failed_rounds: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportStartError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Client(#[from] ExportError),
}

/// The export task of a running receiver.
pub(crate) struct Exporter {
    stop: oneshot::Sender<()>,
    task: JoinHandle<ExportSummary>,
}

impl Exporter {
    /// Starts exporting what is stored in `db` from now on.
    pub async fn start(db: Db, cfg: ExportConfig) -> Result<Self, ExportStartError> {
        let client = Client::new(cfg.endpoint.clone())?;
        let store = Store::open_existing(db.clone()).await?;
        tracing::info!(
            "exporting diagnosed traces to {} every {:?}",
            cfg.endpoint,
            cfg.every
        );
        let state = State {
            db,
            store,
            client,
            tracker: Tracker::new(intpath_core::time::now_ns() as i64),
            held: VecDeque::new(),
            summary: ExportSummary::default(),
            cfg,
        };
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(run(state, stopped));
        Ok(Exporter { stop, task })
    }

    /// Runs the last round and says what the export did.
    pub async fn finish(self) -> ExportSummary {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}

async fn run(mut state: State, mut stop: oneshot::Receiver<()>) -> ExportSummary {
    let every = state.cfg.every.max(Duration::from_millis(10));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => state.round(false).await,
            _ = &mut stop => break,
        }
    }
    state.round(true).await;
    state.store.close().await;
    state.summary
}

struct State {
    db: Db,
    /// Its own connection, for the arrivals.
    store: Store,
    client: Client,
    cfg: ExportConfig,
    tracker: Tracker,
    /// Batches not posted yet, oldest first.
    held: VecDeque<Batch>,
    summary: ExportSummary,
}

/// Why a round's traces were not queued.
struct NotQueued {
    /// The same traces are taken again next round (the database failed).
    retry: bool,
    why: String,
}

impl State {
    /// One round; `last`: every stored trace is ready.
    async fn round(&mut self, last: bool) {
        let now = intpath_core::time::now_ns() as i64;
        let quiet = if last {
            0
        } else {
            self.cfg.quiet.as_nanos() as i64
        };
        let mut problems = Vec::new();
        if let Err(e) = self.queue(now.saturating_sub(quiet)).await {
            problems.push(e.why);
        }
        problems.extend(self.bound());
        problems.extend(self.post().await);
        let held = self.held_spans();
        if last && held > 0 {
            self.summary.spans_failed += held as u64;
            self.held.clear();
            problems.push(format!("{held} spans not exported at stop"));
        }
        if !problems.is_empty() {
            self.summary.failed_rounds += 1;
            tracing::warn!("OTLP export round failed: {}", problems.join("; "));
        }
    }

    /// Diagnoses the traces ready at `cutoff` and queues their spans.
    async fn queue(&mut self, cutoff: i64) -> Result<(), NotQueued> {
        let arrivals = self
            .store
            .span_arrivals(self.tracker.horizon())
            .await
            .map_err(|e| NotQueued {
                retry: true,
                why: e.to_string(),
            })?;
        let pick = self.tracker.pick(&arrivals, cutoff);
        let n = pick.send.len();
        if n > 0 {
            match self.diagnose(&pick).await {
                Ok(ex) => {
                    self.summary.spans_undiagnosed += n.saturating_sub(ex.spans) as u64;
                    tracing::debug!("{} diagnosed spans queued", ex.spans);
                    self.held.extend(export::batches(ex.request));
                }
                Err(e) if e.retry => {
                    return Err(NotQueued {
                        why: format!("cannot diagnose {n} spans (again next round): {}", e.why),
                        ..e
                    })
                }
                Err(e) => {
                    self.summary.spans_undiagnosed += n as u64;
                    self.tracker.commit(pick);
                    return Err(NotQueued {
                        why: format!("{n} spans not sent: {}", e.why),
                        ..e
                    });
                }
            }
        }
        self.tracker.commit(pick);
        Ok(())
    }

    /// `pick`'s spans with the diagnosis of them and their context: with
    /// the INT of the collector run they overlap most, or from the traces
    /// alone when the database holds no run or that run's time left none
    /// of their calls (an old run, the receiver started after it).
    async fn diagnose(&self, pick: &Pick) -> Result<export::Export, NotQueued> {
        let context = self.cfg.context.as_nanos() as i64;
        let failed = |e: DiagnoseError| NotQueued {
            retry: matches!(e, DiagnoseError::Store(_) | DiagnoseError::Runtime(_)),
            why: e.to_string(),
        };
        let mut no_int = false;
        loop {
            let req = Request {
                db: Some(self.db.clone()),
                window: SpanWindow::Between(pick.first_start.saturating_sub(context), i64::MAX),
                no_int,
                ..Request::default()
            };
            let inputs = intpath_diagnose::load(&req).await.map_err(failed)?;
            let with_int = inputs.int.is_some();
            let send = pick.send.clone();
            let analysed = tokio::task::spawn_blocking(move || {
                let d = intpath_diagnose::analyze(&inputs, &Options::default())?;
                Ok(export::otlp_of(&d, &inputs.spans.spans, |s| {
                    send.contains(&(s.trace_id.clone(), s.span_id.clone()))
                }))
            })
            .await;
            match analysed {
                Ok(Err(DiagnoseError::NoEdges { .. })) if with_int => no_int = true,
                Ok(r) => return r.map_err(failed),
                Err(e) => {
                    return Err(NotQueued {
                        retry: false,
                        why: format!("the diagnosis failed: {e}"),
                    })
                }
            }
        }
    }

    fn held_spans(&self) -> usize {
        self.held.iter().map(|b| b.spans).sum()
    }

    /// Gives up the oldest batches past the hold limit; how many spans.
    fn bound(&mut self) -> Option<String> {
        let mut held = self.held_spans();
        let mut dropped = 0;
        while held > self.cfg.max_held {
            let Some(b) = self.held.pop_front() else {
                break;
            };
            held -= b.spans;
            dropped += b.spans;
        }
        self.summary.spans_failed += dropped as u64;
        (dropped > 0).then(|| {
            format!(
                "{dropped} spans given up (more than {} held)",
                self.cfg.max_held
            )
        })
    }

    /// Posts the held batches, oldest first, until one fails; the failure.
    async fn post(&mut self) -> Option<String> {
        while let Some(b) = self.held.front() {
            let spans = b.spans as u64;
            match self.client.post(b).await {
                Ok(rejected) => {
                    let rejected = rejected.min(spans);
                    self.summary.spans_exported += spans - rejected;
                    self.summary.spans_failed += rejected;
                    self.held.pop_front();
                    if rejected > 0 {
                        return Some(format!("the backend rejected {rejected} of {spans} spans"));
                    }
                }
                Err(e) if e.retryable() => {
                    let held = self.held_spans();
                    return Some(format!("{e} ({held} spans held for the next round)"));
                }
                Err(e) => {
                    self.summary.spans_failed += spans;
                    self.held.pop_front();
                    return Some(format!("{e} ({spans} spans given up)"));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_oldest_batches_beyond_the_hold_limit_are_given_up() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::from(dir.path().join("t.db"));
        let cfg = ExportConfig {
            max_held: 3,
            ..ExportConfig::new("http://127.0.0.1:1".parse().unwrap())
        };
        let batch = |spans| Batch {
            request: Default::default(),
            spans,
        };
        let mut s = State {
            store: Store::open(&db).await.unwrap(),
            db,
            client: Client::new(cfg.endpoint.clone()).unwrap(),
            cfg,
            tracker: Tracker::new(0),
            held: [batch(2), batch(2), batch(1)].into(),
            summary: ExportSummary::default(),
        };
        assert_eq!(
            s.bound().as_deref(),
            Some("2 spans given up (more than 3 held)")
        );
        assert_eq!(s.summary.spans_failed, 2);
        let left: Vec<usize> = s.held.iter().map(|b| b.spans).collect();
        assert_eq!(left, [2, 1]);
        assert_eq!(s.bound(), None);
        s.store.close().await;
    }
}
