//! What a receiver counts: every request by how it was answered, and every
//! span by what became of it, so that the counts add up to what senders
//! sent and a loss is never silent.

use std::sync::atomic::{AtomicU64, Ordering};

/// How an export request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Success, every span accepted.
    Ok,
    /// Success with `partial_success` (spans rejected or conflicting).
    Partial,
    /// HTTP 400, gRPC INVALID_ARGUMENT: the body does not decode.
    Invalid,
    /// HTTP 413, gRPC RESOURCE_EXHAUSTED: over `--otlp-max-body`.
    TooLarge,
    /// HTTP 415: a media type or encoding OTLP does not have.
    Unsupported,
    /// HTTP 503, gRPC UNAVAILABLE: the store failed or the receiver is
    /// stopping; the sender retries.
    Unavailable,
}

/// Requests by outcome, counted as they are answered.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    answered: [AtomicU64; 6],
    /// Spans rejected inside accepted requests (malformed).
    pub rejected: AtomicU64,
    /// Spans whose ids are stored with other content.
    pub conflicting: AtomicU64,
}

impl Counts {
    pub fn answered(&self, o: Outcome) {
        self.answered[o as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn requests(&self) -> Requests {
        let n = |o: Outcome| self.answered[o as usize].load(Ordering::Relaxed);
        Requests {
            ok: n(Outcome::Ok),
            partial: n(Outcome::Partial),
            invalid: n(Outcome::Invalid),
            too_large: n(Outcome::TooLarge),
            unsupported: n(Outcome::Unsupported),
            unavailable: n(Outcome::Unavailable),
        }
    }
}

/// Export requests answered, by outcome (they add up to every request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Requests {
    pub ok: u64,
    pub partial: u64,
    pub invalid: u64,
    pub too_large: u64,
    pub unsupported: u64,
    pub unavailable: u64,
}

impl Requests {
    pub fn total(&self) -> u64 {
        self.ok + self.partial + self.invalid + self.too_large + self.unsupported + self.unavailable
    }
}

/// What a receiver did over its life.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub requests: Requests,
    /// Rows written: spans stored for the first time.
    pub spans_stored: u64,
    /// Spans acknowledged that were already stored with the same content
    /// (an exporter's retry): not stored twice.
    pub spans_duplicate: u64,
    /// Malformed spans left out of accepted requests (`partial_success`).
    pub spans_rejected: u64,
    /// Spans whose trace and span id were stored with other content: the
    /// stored one is kept, the sender told (`partial_success`).
    pub spans_conflicting: u64,
    /// Spans answered 503 / UNAVAILABLE because their write failed (each
    /// time: a retry refused again counts again).
    pub spans_refused: u64,
    /// Refused spans never stored by the end (not re-sent, or the store
    /// still failed): lost unless their sender kept them.
    pub spans_lost: u64,
    pub transactions: u64,
    pub failed_transactions: u64,
    /// The store's last error, when spans were lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_reason: Option<String>,
    /// With `--export-otlp`: what was sent on. A backend that failed loses
    /// nothing stored, so it is no error of the receiver's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub export: Option<super::ExportSummary>,
}

#[derive(Debug, thiserror::Error)]
#[error(
    "{lost} spans were lost: answered 503 while the store failed and never stored afterwards: {reason}"
)]
pub struct SpansLost {
    pub lost: u64,
    pub reason: String,
}

impl Summary {
    /// An error naming the spans this receiver lost, if it lost any.
    pub fn check(&self) -> Result<(), SpansLost> {
        match self.spans_lost {
            0 => Ok(()),
            lost => Err(SpansLost {
                lost,
                reason: self.lost_reason.clone().unwrap_or_default(),
            }),
        }
    }
}
