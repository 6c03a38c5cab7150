//! The one task that writes spans: requests queue here with a channel to
//! answer on, and whatever has queued while the previous transaction ran goes
//! into the next one (group commit). A request is answered only after its
//! transaction committed, so an acknowledged span is a stored span, and a
//! busy receiver still writes few, large transactions.

use intpath_store::spans::SpanBatch;
use intpath_store::Store;
use tokio::sync::{mpsc, oneshot};

/// One request's spans and where to say whether they were stored.
pub(crate) struct Job {
    pub batch: SpanBatch,
    pub done: oneshot::Sender<Result<(), String>>,
}

/// What the writer did over its life.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Written {
    pub spans: u64,
    pub transactions: u64,
    pub failed_transactions: u64,
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
        let mut batch = first.batch;
        let mut waiting = vec![first.done];
        while batch.spans.len() < max_spans {
            match jobs.try_recv() {
                Ok(j) => {
                    batch.append(j.batch);
                    waiting.push(j.done);
                }
                Err(_) => break,
            }
        }
        let result = store.write_spans(&batch).await.map_err(|e| e.to_string());
        w.transactions += 1;
        match &result {
            Ok(()) => w.spans += batch.spans.len() as u64,
            Err(e) => {
                w.failed_transactions += 1;
                tracing::warn!("{} spans not stored: {e}", batch.spans.len());
            }
        }
        for done in waiting {
            // A sender that gave up waiting still had its spans stored.
            let _ = done.send(result.clone());
        }
    }
    store.close().await;
    w
}
