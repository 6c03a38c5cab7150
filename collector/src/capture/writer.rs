//! The writer task: folds probes into batches, stores them when big or old
//! enough, and keeps what a failed write could not store for the next try.

use super::{CaptureError, Options, Summary};
use crate::ingest::Aggregator;
use crate::metrics::Metrics;
use crate::parse::{Probe, RejectCounts};
use intpath_core::time::now_ns;
use intpath_store::rows::Batch;
use intpath_store::{RunId, Store, StoreError};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub(super) async fn write_loop(
    store: Store,
    run: RunId,
    mut agg: Aggregator,
    mut rx: mpsc::Receiver<Probe>,
    rejects: Arc<RejectCounts>,
    opts: Options,
) -> Result<Summary, CaptureError> {
    let mut w = Writer {
        store,
        run,
        rejects,
        metrics: opts.metrics.clone(),
        pending: VecDeque::new(),
        summary: Summary {
            run,
            ..Summary::default()
        },
        rejects_written: 0,
        last_error: None,
        failing_since: None,
        max_held: opts.max_held.max(1),
        retry_at: None,
        backoff: Duration::ZERO,
    };
    let mut tick = tokio::time::interval(opts.flush_every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut expire = tokio::time::interval(Duration::from_secs(60));
    expire.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = expire.tick(), if opts.retention.is_some() => {
                let keep = opts.retention.expect("checked by the guard");
                match w.store.drop_expired(keep, now_ns() as i64).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(hours = n, "retention: dropped old partitions"),
                    Err(e) => tracing::warn!("retention: {e}"),
                }
            }
            m = rx.recv() => match m {
                Some(p) => {
                    agg.add(p);
                    if agg.pending_hops() >= opts.flush_hops {
                        w.flush(&mut agg).await;
                    }
                }
                None => break,
            },
            _ = tick.tick() => w.flush(&mut agg).await,
        }
    }
    w.flush(&mut agg).await;
    // A store that is failing at shutdown gets a few more tries, then what
    // it still could not take is counted as lost.
    for _ in 0..FINAL_TRIES {
        if w.pending.is_empty() {
            break;
        }
        tokio::time::sleep(FINAL_RETRY).await;
        w.store_held().await;
    }
    for b in std::mem::take(&mut w.pending) {
        w.lose(&b, "the store still failed at shutdown");
    }
    w.summary.rejects = w.rejects.snapshot();
    w.store.close().await;
    tracing::info!(?w.summary, "collector stopped");
    Ok(w.summary)
}

/// Retries of the held batches once the sources have stopped.
const FINAL_TRIES: usize = 5;
const FINAL_RETRY: Duration = Duration::from_millis(200);

/// The writer's state: batches not yet stored survive a failed write (a full
/// disk, a locked file) and are retried, oldest first, at the next flush.
struct Writer {
    store: Store,
    run: RunId,
    rejects: Arc<RejectCounts>,
    metrics: Option<Metrics>,
    pending: VecDeque<Batch>,
    summary: Summary,
    rejects_written: u64,
    last_error: Option<StoreError>,
    /// When writes started failing, while they do.
    failing_since: Option<Instant>,
    /// Probes `pending` may hold.
    max_held: usize,
    /// While writes fail: when to try again, and the wait before that.
    retry_at: Option<Instant>,
    backoff: Duration,
}

/// Waits between retries of a failing store.
const MIN_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(4);

impl Writer {
    /// Takes the aggregator's batch and stores what is held, unless the
    /// store failed and its next retry is not due yet.
    async fn flush(&mut self, agg: &mut Aggregator) {
        self.hold(agg.take());
        if self.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        self.store_held().await;
    }

    /// Queues a batch behind the held ones: merged into the last while the
    /// store fails (one transaction per outage, not one per tick), or counted
    /// as lost when the held probes would pass `max_held`.
    fn hold(&mut self, batch: Batch) {
        if batch.is_empty() {
            return;
        }
        let held: usize = self.pending.iter().map(|b| b.received).sum();
        if held + batch.received > self.max_held {
            // The oldest batch stays first in line: it is the one whose
            // write may have been in doubt.
            self.lose(&batch, "the store failed while the held batches were full");
        } else if self.pending.len() >= 2 {
            self.pending.back_mut().expect("two batches").absorb(batch);
        } else {
            self.pending.push_back(batch);
        }
    }

    async fn store_held(&mut self) {
        let rejects_now = self.rejects.total();
        if self.pending.is_empty() && rejects_now == self.rejects_written {
            return;
        }
        let counts = self.rejects.snapshot();
        if self.pending.is_empty() {
            self.pending.push_back(Batch::default());
        }
        while let Some(b) = self.pending.front() {
            match self.store.write(self.run, b, &counts).await {
                Ok(()) => {
                    if let Some(m) = &self.metrics {
                        m.stored(b);
                    }
                    self.summary.probes += b.received as u64;
                    self.summary.hops += b.received_hops as u64;
                    self.summary.raw_probes += b.probes.len() as u64;
                    self.summary.raw_hops += b.hops as u64;
                    self.rejects_written = rejects_now;
                    self.last_error = None;
                    (self.retry_at, self.backoff) = (None, Duration::ZERO);
                    self.pending.pop_front();
                    if let Some(since) = self.failing_since.take() {
                        let ms = since.elapsed().as_millis() as u64;
                        self.summary.store_outages += 1;
                        self.summary.store_outage_ms += ms;
                        tracing::warn!(
                            gap_ms = ms,
                            "store reachable again after {ms} ms; the probes held meanwhile are stored"
                        );
                    }
                }
                Err(e) => {
                    if self.failing_since.is_none() {
                        self.failing_since = Some(Instant::now());
                    }
                    tracing::warn!(
                        held = self.pending.len(),
                        "store write failed, holding the batch to retry: {e}"
                    );
                    self.last_error = Some(e);
                    // Each try of a big batch costs as much as storing it:
                    // back off so the probes queued meanwhile still flow in.
                    self.backoff = (self.backoff * 2).clamp(MIN_BACKOFF, MAX_BACKOFF);
                    self.retry_at = Some(Instant::now() + self.backoff);
                    break;
                }
            }
        }
    }

    /// Counts a batch that will never be stored, with why.
    fn lose(&mut self, b: &Batch, why: &str) {
        if b.received == 0 {
            return;
        }
        let reason = match &self.last_error {
            Some(e) => format!("{why}: {e}"),
            None => why.to_owned(),
        };
        tracing::error!(probes = b.received, "probes lost: {reason}");
        self.summary.lost_probes += b.received as u64;
        if let Some(m) = &self.metrics {
            m.lost(b);
        }
        self.summary.lost_reason.get_or_insert(reason);
    }
}
