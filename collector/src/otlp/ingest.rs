//! What an export request becomes once decoded, whichever protocol carried
//! it: rows (`convert`), queued for the writer, answered once committed. The
//! HTTP and gRPC front ends differ only in how they decode and how they say
//! the answer.

use super::convert::convert;
use super::summary::{Counts, Outcome};
use super::writer::{Job, Stored};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use std::sync::atomic::Ordering;
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

/// Why accepted spans were not stored; the sender may retry (HTTP 503,
/// gRPC UNAVAILABLE).
#[derive(Debug)]
pub(crate) struct Unavailable(pub String);

impl Shared {
    /// Stores the spans of `req` that the store can represent and answers
    /// once they are committed, counting the others (malformed, or re-sent
    /// with other content under a stored span's ids) as a partial success.
    pub async fn export(
        &self,
        req: ExportTraceServiceRequest,
    ) -> Result<ExportTraceServiceResponse, Unavailable> {
        let converted = convert(req);
        let mut messages: Vec<String> = converted.reject_message().into_iter().collect();
        let stored = match converted.batch.spans.is_empty() {
            true => Stored::default(),
            false => self.store(converted.batch).await.inspect_err(|_| {
                self.counts.answered(Outcome::Unavailable);
            })?,
        };
        if let Some((trace, span)) = &stored.first_conflict {
            messages.push(format!(
                "{} spans re-sent with the ids of stored spans but other content, kept as \
                 first stored; first: trace {trace} span {span}",
                stored.conflicts
            ));
        }
        let rejected = converted.rejected + stored.conflicts;
        self.counts
            .rejected
            .fetch_add(converted.rejected, Ordering::Relaxed);
        self.counts
            .conflicting
            .fetch_add(stored.conflicts, Ordering::Relaxed);
        let partial_success = (rejected > 0).then(|| ExportTracePartialSuccess {
            rejected_spans: rejected as i64,
            error_message: messages.join("; "),
        });
        self.counts.answered(match partial_success {
            Some(_) => Outcome::Partial,
            None => Outcome::Ok,
        });
        Ok(ExportTraceServiceResponse { partial_success })
    }

    /// Queues `batch` for the writer (waiting while its queue is full: that
    /// wait is the back-pressure a busy store puts on senders).
    async fn store(&self, batch: intpath_store::spans::SpanBatch) -> Result<Stored, Unavailable> {
        let closing = || Unavailable("the receiver is shutting down".into());
        let (done, stored) = oneshot::channel();
        self.jobs
            .send(Job { batch, done })
            .await
            .map_err(|_| closing())?;
        match stored.await {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(e)) => Err(Unavailable(format!("spans not stored: {e}"))),
            Err(_) => Err(closing()),
        }
    }
}
