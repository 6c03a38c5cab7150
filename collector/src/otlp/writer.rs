//! The one task that writes spans: requests queue here with a channel to
//! answer on, and whatever has queued while the previous transaction ran goes
//! into the next one (group commit). A request is answered only after its
//! transaction committed, so an acknowledged span is a stored span, and a
//! busy receiver still writes few, large transactions.
//!
//! A failed write is rolled back whole (the store closes its connection, so
//! no lock outlives it) and its requests are answered 503 / UNAVAILABLE; the
//! next request tries again, so the receiver recovers as soon as the store
//! does. The writer remembers the spans it refused until a later write
//! stores them (exporters retry): those still missing at the end are lost.

use intpath_store::spans::{SpanBatch, SpanOutcome, SpanRow};
use intpath_store::Store;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use tokio::sync::{mpsc, oneshot};

/// One request's spans and where to say what became of them.
pub(crate) struct Job {
    pub batch: SpanBatch,
    pub done: oneshot::Sender<Result<Stored, String>>,
}

/// What became of one request's spans once committed.
#[derive(Debug, Default)]
pub(crate) struct Stored {
    pub duplicate: u64,
    pub conflicts: u64,
    /// The first conflicting span's trace and span id.
    pub first_conflict: Option<(String, String)>,
}

/// What the writer did over its life.
#[derive(Debug, Default, Clone)]
pub(crate) struct Written {
    pub spans: u64,
    pub duplicate: u64,
    pub refused: u64,
    pub lost: u64,
    pub last_error: Option<String>,
    pub transactions: u64,
    pub failed_transactions: u64,
}

/// Most refused spans remembered one by one; beyond that a refused span
/// counts as lost, whatever its sender does.
const MAX_REMEMBERED: usize = 1 << 20;

/// Spans answered 503 and not stored since, by a hash of their ids (a
/// 64-bit hash: two of a million refused spans collide once in ~3·10⁷
/// outages).
#[derive(Default)]
struct Refused {
    ids: HashSet<u64>,
    forgotten: u64,
}

impl Refused {
    fn key(s: &SpanRow) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        (&s.trace_id, &s.span_id).hash(&mut h);
        h.finish()
    }

    fn add(&mut self, s: &SpanRow) {
        if self.ids.len() < MAX_REMEMBERED {
            self.ids.insert(Self::key(s));
        } else if !self.ids.contains(&Self::key(s)) {
            self.forgotten += 1;
        }
    }

    /// `s` is stored now (or conflicts with a stored span, which its sender
    /// was told).
    fn settled(&mut self, s: &SpanRow) {
        if !self.ids.is_empty() {
            self.ids.remove(&Self::key(s));
        }
    }

    fn lost(&self) -> u64 {
        self.ids.len() as u64 + self.forgotten
    }
}

/// Writes jobs until `finish` fires (or every sender is gone), then stores
/// what is still queued, closes the database and returns.
pub(crate) async fn run(
    store: Store,
    mut jobs: mpsc::Receiver<Job>,
    mut finish: oneshot::Receiver<()>,
    max_spans: usize,
) -> Written {
    let mut w = Written::default();
    let mut refused = Refused::default();
    let mut finishing = false;
    loop {
        let first = tokio::select! {
            biased;
            j = jobs.recv() => j,
            _ = &mut finish, if !finishing => {
                // No new jobs from here on; the queued ones are still read.
                finishing = true;
                jobs.close();
                continue;
            }
        };
        let Some(first) = first else { break };
        let mut waiting = vec![(first.done, first.batch.spans.len())];
        let mut batch = first.batch;
        while batch.spans.len() < max_spans {
            match jobs.try_recv() {
                Ok(j) => {
                    waiting.push((j.done, j.batch.spans.len()));
                    batch.append(j.batch);
                }
                Err(_) => break,
            }
        }
        w.transactions += 1;
        match store.write_spans(&batch).await {
            Ok(outcomes) => {
                let mut rest = &outcomes[..];
                let mut spans = batch.spans.iter();
                for (done, n) in waiting {
                    let (mine, later) = rest.split_at(n);
                    rest = later;
                    let mut s = Stored::default();
                    for (o, (_, span)) in mine.iter().zip(spans.by_ref()) {
                        refused.settled(span);
                        match o {
                            SpanOutcome::Stored => w.spans += 1,
                            SpanOutcome::Duplicate => s.duplicate += 1,
                            SpanOutcome::Conflict => {
                                s.conflicts += 1;
                                s.first_conflict.get_or_insert_with(|| {
                                    (span.trace_id.clone(), span.span_id.clone())
                                });
                            }
                        }
                    }
                    w.duplicate += s.duplicate;
                    // A sender that gave up waiting still had its spans stored.
                    let _ = done.send(Ok(s));
                }
            }
            Err(e) => {
                let e = e.to_string();
                w.failed_transactions += 1;
                w.refused += batch.spans.len() as u64;
                tracing::warn!("{} spans not stored, answered 503: {e}", batch.spans.len());
                for (_, s) in &batch.spans {
                    refused.add(s);
                }
                for (done, _) in waiting {
                    let _ = done.send(Err(e.clone()));
                }
                w.last_error = Some(e);
            }
        }
    }
    store.close().await;
    w.lost = refused.lost();
    if w.lost > 0 {
        tracing::error!(spans = w.lost, "refused spans were never stored");
    }
    w
}
