//! P4Info files and name resolution.
//!
//! People and plans speak of `Ingress.ipv4_lpm` and `hdr.ipv4.dst_addr`;
//! the wire speaks of numeric ids and exact bit widths. [`P4InfoIndex`] is the
//! single place that maps one to the other, so that a program and controller
//! that disagree fail with the name that is missing rather than with a
//! switch rejecting an id.

mod entries;
mod index;
#[cfg(test)]
mod tests;

pub use entries::Match;
pub use index::{
    ActionInfo, CounterInfo, FieldInfo, MatchFieldInfo, P4InfoIndex, PacketMetadataInfo, TableInfo,
};

use crate::bytes::ValueError;
use crate::proto::p4::config::v1 as cfg;
use prost::Message;
use prost_reflect::DynamicMessage;
use std::path::{Path, PathBuf};

pub use cfg::match_field::MatchType;
pub use cfg::P4Info;

/// What went wrong reading a P4Info or resolving a name in it.
#[derive(Debug, thiserror::Error)]
pub enum P4InfoError {
    #[error("{path}: cannot read P4Info: {cause}")]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("P4Info text format: {0}")]
    Text(String),
    #[error("P4Info binary: {0}")]
    Binary(prost::DecodeError),
    #[error("{path}: {cause}")]
    File {
        path: PathBuf,
        cause: Box<P4InfoError>,
    },
    #[error("P4Info has two {kind}s named {name:?}")]
    Duplicate { kind: &'static str, name: String },
    #[error("P4Info has no {kind} named {name:?}")]
    Unknown { kind: &'static str, name: String },
    #[error("P4Info has no {kind} with id {id:#x}")]
    UnknownId { kind: &'static str, id: u32 },
    #[error("table {table}: no match field named {field:?}")]
    UnknownField { table: String, field: String },
    #[error("table {table}: no match field with id {id}")]
    UnknownFieldId { table: String, id: u32 },
    #[error("action {action}: no parameter named {param:?}")]
    UnknownParam { action: String, param: String },
    #[error("action {action}: no parameter with id {id}")]
    UnknownParamId { action: String, id: u32 },
    #[error("action {action}: parameter {param} not given")]
    MissingParam { action: String, param: String },
    #[error("table {table}: action {action} is not one of its actions")]
    ActionNotInTable { table: String, action: String },
    #[error("table {table}: field {field} is {actual:?}, not {requested:?}")]
    MatchKind {
        table: String,
        field: String,
        actual: MatchType,
        requested: MatchType,
    },
    #[error("{what}: {cause}")]
    Value { what: String, cause: ValueError },
}

fn p4info_descriptor() -> prost_reflect::MessageDescriptor {
    crate::proto::descriptor_pool()
        .get_message_by_name("p4.config.v1.P4Info")
        .expect("P4Info is in the descriptor set")
}

/// Parses the protobuf text format p4c writes (`--p4runtime-files x.p4info.txtpb`).
pub fn from_text(text: &str) -> Result<P4Info, P4InfoError> {
    let dynamic = DynamicMessage::parse_text_format(p4info_descriptor(), text)
        .map_err(|e| P4InfoError::Text(e.to_string()))?;
    dynamic
        .transcode_to::<P4Info>()
        .map_err(P4InfoError::Binary)
}

/// Parses the binary protobuf encoding.
pub fn from_binary(bytes: &[u8]) -> Result<P4Info, P4InfoError> {
    P4Info::decode(bytes).map_err(P4InfoError::Binary)
}

/// Writes the text format (what [`from_text`] reads).
pub fn to_text(info: &P4Info) -> String {
    let dynamic = DynamicMessage::decode(p4info_descriptor(), info.encode_to_vec().as_slice())
        .expect("a P4Info re-decodes with its own descriptor");
    dynamic
        .to_text_format_with_options(&prost_reflect::text_format::FormatOptions::new().pretty(true))
}

/// Reads a P4Info file: binary for `.bin`/`.pb`/`.binpb`, text otherwise.
pub fn load(path: &Path) -> Result<P4Info, P4InfoError> {
    let data = std::fs::read(path).map_err(|source| P4InfoError::Read {
        path: path.to_owned(),
        cause: source,
    })?;
    let binary = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("bin" | "pb" | "binpb")
    );
    let parsed = if binary {
        from_binary(&data)
    } else {
        match std::str::from_utf8(&data) {
            Ok(text) => from_text(text),
            Err(_) => from_binary(&data),
        }
    };
    parsed.map_err(|e| P4InfoError::File {
        path: path.to_owned(),
        cause: Box::new(e),
    })
}
