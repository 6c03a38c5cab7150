//! What can go wrong talking to a device, always naming the device.

use super::Target;
use crate::bytes::ValueError;
use crate::p4info::P4InfoError;
use std::fmt;
use std::time::Duration;

/// One update of a batch the device refused, with its own words.
#[derive(Debug, Clone)]
pub struct UpdateFailure {
    /// Position in the list given to [`Client::write`].
    pub index: usize,
    /// The entity rendered by name (when the P4Info is known).
    pub update: String,
    pub code: tonic::Code,
    pub message: String,
}

impl fmt::Display for UpdateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "update {} ({}): {:?}: {}",
            self.index, self.update, self.code, self.message
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{target}: cannot connect: {reason}")]
    Connect { target: Target, reason: String },
    #[error("{target}: no answer to {what} within {timeout:?}")]
    Timeout {
        target: Target,
        what: &'static str,
        timeout: Duration,
    },
    #[error("{target}: not primary: the device's primary has election id {primary}, ours is {ours} ({message})")]
    NotPrimary {
        target: Target,
        primary: u128,
        ours: u128,
        message: String,
    },
    #[error("{target}: {what} failed: {code:?}: {message}")]
    Rpc {
        target: Target,
        what: &'static str,
        code: tonic::Code,
        message: String,
    },
    #[error(
        "{target}: {rejected} of {total} updates rejected:\n  {}",
        first_failures(failures)
    )]
    Write {
        target: Target,
        total: usize,
        /// Updates refused; more than `failures` when a switch reported a
        /// whole batch as one failure (no per-update errors).
        rejected: usize,
        failures: Vec<UpdateFailure>,
    },
    /// The device refused our arbitration: a live stream already holds our
    /// election id (another client's, or a stale session of our own).
    #[error("another client holds election id {election_id} on {target} ({message})")]
    ElectionIdInUse {
        target: Target,
        election_id: u128,
        message: String,
    },
    #[error("{target}: stream channel closed (switch restarted or unreachable)")]
    StreamClosed { target: Target },
    #[error("{target}: no pipeline loaded (push one first)")]
    NoPipeline { target: Target },
    #[error("{target}: P4Info mismatch: {difference}")]
    P4InfoMismatch { target: Target, difference: String },
    #[error("{target}: {cause}")]
    P4Info {
        target: Target,
        cause: Box<P4InfoError>,
    },
    #[error("{target}: {what}: {cause}")]
    Value {
        target: Target,
        what: String,
        cause: Box<ValueError>,
    },
}

/// Failures shown in a [`ClientError::Write`] message: the first reasons
/// say what is wrong, thousands of lines would hide it.
pub const SHOWN_FAILURES: usize = 10;

fn first_failures(failures: &[UpdateFailure]) -> String {
    let mut lines: Vec<String> = failures
        .iter()
        .take(SHOWN_FAILURES)
        .map(UpdateFailure::to_string)
        .collect();
    if failures.len() > SHOWN_FAILURES {
        lines.push(format!("... and {} more", failures.len() - SHOWN_FAILURES));
    }
    lines.join("\n  ")
}

pub(super) fn rpc_error(target: &Target, what: &'static str, status: tonic::Status) -> ClientError {
    ClientError::Rpc {
        target: target.clone(),
        what,
        code: status.code(),
        message: status.message().to_owned(),
    }
}

/// The innermost causes too: tonic's top-level transport error just says
/// "transport error".
pub(super) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    intpath_core::logging::one_line(e)
}
