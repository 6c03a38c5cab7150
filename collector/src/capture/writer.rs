//! The writer task: folds probes into batches, stores them when big or old
//! enough, and keeps what a failed write could not store for the next try.

use super::{CaptureError, Options, Summary};
use crate::ingest::Aggregator;
use crate::metrics::Metrics;
use crate::parse::{now_ns, Probe, RejectCounts};
use crate::store::{RunId, Store, StoreError};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
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
    let unsaved: usize = w.pending.iter().map(|b| b.received).sum();
    if let Some(source) = w.last_error.take() {
        if unsaved > 0 {
            w.store.close().await;
            return Err(CaptureError::Unsaved { unsaved, source });
        }
    }
    w.summary.rejects = w.rejects.snapshot();
    w.store.close().await;
    tracing::info!(?w.summary, "collector stopped");
    Ok(w.summary)
}

/// The writer's state: batches not yet stored survive a failed write (a full
/// disk, a locked file) and are retried, oldest first, at the next flush.
struct Writer {
    store: Store,
    run: RunId,
    rejects: Arc<RejectCounts>,
    metrics: Option<Metrics>,
    pending: VecDeque<crate::ingest::Batch>,
    summary: Summary,
    rejects_written: u64,
    last_error: Option<StoreError>,
    /// When writes started failing, while they do.
    failing_since: Option<std::time::Instant>,
}

impl Writer {
    async fn flush(&mut self, agg: &mut Aggregator) {
        let batch = agg.take();
        if !batch.is_empty() {
            self.pending.push_back(batch);
        }
        let rejects_now = self.rejects.total();
        if self.pending.is_empty() && rejects_now == self.rejects_written {
            return;
        }
        let counts = self.rejects.snapshot();
        if self.pending.is_empty() {
            self.pending.push_back(crate::ingest::Batch::default());
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
                        self.failing_since = Some(std::time::Instant::now());
                    }
                    tracing::warn!(
                        held = self.pending.len(),
                        "store write failed, holding the batch to retry: {e}"
                    );
                    self.last_error = Some(e);
                    break;
                }
            }
        }
    }
}
