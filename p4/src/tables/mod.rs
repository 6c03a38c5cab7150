//! The match-action tables of `sr_int.p4`, typed for fast lookups, and their
//! translation from and to name-based entries (bytestring values), which is how
//! P4Runtime (after id resolution) and the test vectors speak.

mod named;
mod store;

pub use store::{Lpm, Tables};

use intpath_core::wire::MAX_HOPS;
use intpath_p4rt::bytes;

/// Why an entry cannot be applied; maps onto P4Runtime status codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("entry already exists in {0}")]
    AlreadyExists(&'static str),
    #[error("no such entry in {0}")]
    NotFound(&'static str),
    #[error("{table} is full ({size} entries)")]
    Full { table: &'static str, size: u64 },
}

fn invalid(msg: impl Into<String>) -> TableError {
    TableError::InvalidArgument(msg.into())
}

/// One key field of a name-based entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedMatch {
    pub field: String,
    pub value: Vec<u8>,
    /// Present for LPM fields.
    pub prefix_len: Option<u32>,
}

/// A table entry by names, with P4Runtime bytestring values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedEntry {
    pub table: String,
    pub is_default: bool,
    pub matches: Vec<NamedMatch>,
    pub action: String,
    pub params: Vec<(String, Vec<u8>)>,
}

/// Reads a P4Runtime bytestring that must fit `width` bits (an empty one
/// is refused, as P4Runtime requires and our client does).
pub fn bytes_to_u128(what: &str, value: &[u8], width: u32) -> Result<u128, TableError> {
    bytes::canonical(value, width)
        .and_then(|c| bytes::decode_uint(&c))
        .map_err(|e| invalid(format!("{what}: {e}")))
}

/// `push_route`'s parameters: a label count and MAX_HOPS label slots.
///
/// The count is an 8-bit parameter the table accepts as is; a count over
/// MAX_HOPS makes the probe malformed when the route is pushed (as in the
/// P4 program, which cannot refuse an entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    num_labels: u8,
    labels: [u16; MAX_HOPS],
}

impl Route {
    pub fn new(num_labels: u8, labels: [u16; MAX_HOPS]) -> Self {
        Self { num_labels, labels }
    }

    /// From a label list of at most MAX_HOPS labels.
    pub fn from_labels(labels: &[u16]) -> Option<Self> {
        let mut slots = [0; MAX_HOPS];
        slots.get_mut(..labels.len())?.copy_from_slice(labels);
        Some(Self::new(labels.len() as u8, slots))
    }

    pub fn num_labels(&self) -> u8 {
        self.num_labels
    }

    /// The labels the route pushes, `None` when the count exceeds MAX_HOPS.
    pub fn labels(&self) -> Option<&[u16]> {
        self.labels.get(..usize::from(self.num_labels))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv4Action {
    Forward { dst_mac: [u8; 6], port: u16 },
    Drop,
    NoAction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratorAction {
    PushRoute(Route),
    Drop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkAction {
    ToCollector,
    ToCpu,
    Drop,
}

/// A typed table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `switch_config`'s default action `set_switch_id(switch_id)`.
    SwitchConfigDefault(u32),
    Ipv4 {
        addr: u32,
        prefix_len: u8,
        action: Ipv4Action,
    },
    Generator {
        path_id: u16,
        action: GeneratorAction,
    },
    Sink {
        path_id: u16,
        action: SinkAction,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOp {
    Insert,
    Modify,
    Delete,
}

#[cfg(test)]
mod tests;
