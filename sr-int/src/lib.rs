//! The control-plane contract of `p4/sr_int.p4`, in one place: what the
//! program declares (names and bit widths of tables, keys, actions,
//! parameters, counters and controller headers), its P4Info as p4c makes it,
//! how `push_route` carries a label stack, and what the drop counter's
//! indices mean.
//!
//! The reference switch checks pushed P4Infos against [`schema`], the
//! controller builds its entries from these names, and tests of both sides
//! speak them, so a rename in the program is one edit here plus the P4Info.

#![warn(missing_docs)]

mod drop_reason;
mod labels;
pub mod schema;

pub use drop_reason::DropReason;
pub use labels::{label_stack, labels_from_stack, LabelStackError};

use intpath_p4rt::p4info::{self, P4InfoError, P4InfoIndex};

/// The P4Info of `sr_int.p4` (p4c's output, committed next to the program),
/// built in so that neither switch nor controller needs the file at run time.
pub const P4INFO: &str = include_str!("../../p4/sr_int.p4info.txtpb");

/// [`P4INFO`], parsed and indexed.
pub fn p4info() -> Result<P4InfoIndex, P4InfoError> {
    P4InfoIndex::new(p4info::from_text(P4INFO)?)
}
