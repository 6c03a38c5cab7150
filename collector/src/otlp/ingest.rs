//! What an export request becomes once decoded, whichever protocol carried
//! it: rows (`convert`), queued for the writer, answered once committed. The
//! HTTP and gRPC front ends differ only in how they decode and how they say
//! the answer.

use super::convert::convert;
use super::writer::Job;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// What every request handler shares.
#[derive(Clone)]
pub(crate) struct Shared {
    pub jobs: mpsc::Sender<Job>,
    /// Largest request body, compressed or not.
    pub max_body: usize,
    pub counts: Arc<Counts>,
}

/// Requests answered with success, and spans rejected inside them.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub requests: AtomicU64,
    pub rejected: AtomicU64,
}

/// Why accepted spans were not stored; the sender may retry (HTTP 503,
/// gRPC UNAVAILABLE).
#[derive(Debug)]
pub(crate) struct Unavailable(pub String);

impl Shared {
    /// Stores the spans of `req` that the store can represent and answers
    /// once they are committed, counting the others as a partial success.
    pub async fn export(
        &self,
        req: ExportTraceServiceRequest,
    ) -> Result<ExportTraceServiceResponse, Unavailable> {
        let converted = convert(req);
        let partial_success =
            converted
                .reject_message()
                .map(|error_message| ExportTracePartialSuccess {
                    rejected_spans: converted.rejected as i64,
                    error_message,
                });
        if !converted.batch.spans.is_empty() {
            self.store(converted.batch).await?;
        }
        self.counts.requests.fetch_add(1, Ordering::Relaxed);
        self.counts
            .rejected
            .fetch_add(converted.rejected, Ordering::Relaxed);
        Ok(ExportTraceServiceResponse { partial_success })
    }

    /// Queues `batch` for the writer (waiting while its queue is full: that
    /// wait is the back-pressure a busy store puts on senders).
    async fn store(&self, batch: intpath_store::spans::SpanBatch) -> Result<(), Unavailable> {
        let closing = || Unavailable("the receiver is shutting down".into());
        let (done, stored) = oneshot::channel();
        self.jobs
            .send(Job { batch, done })
            .await
            .map_err(|_| closing())?;
        match stored.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Unavailable(format!("spans not stored: {e}"))),
            Err(_) => Err(closing()),
        }
    }
}
