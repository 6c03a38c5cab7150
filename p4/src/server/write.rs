//! Write RPC helpers: one P4Runtime update to a typed table write, and the
//! errors of a refused batch.

use super::Service;
use crate::p4info_map;
use crate::tables::{Entry, TableError, WriteOp};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::v1 as p4;
use prost::Message;
use tonic::{Code, Status};

impl Service {
    pub(super) fn update(
        &self,
        index: &P4InfoIndex,
        u: &p4::Update,
    ) -> Result<(WriteOp, Entry), p4::Error> {
        let err = |code: Code, message: String| p4::Error {
            canonical_code: code as i32,
            message,
            ..Default::default()
        };
        let op = match p4::update::Type::try_from(u.r#type) {
            Ok(p4::update::Type::Insert) => WriteOp::Insert,
            Ok(p4::update::Type::Modify) => WriteOp::Modify,
            Ok(p4::update::Type::Delete) => WriteOp::Delete,
            _ => return Err(err(Code::InvalidArgument, "update type unspecified".into())),
        };
        let entry = match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
            Some(p4::entity::Entity::TableEntry(t)) => t,
            Some(_) => {
                return Err(err(
                    Code::Unimplemented,
                    "only table entries can be written".into(),
                ))
            }
            None => return Err(err(Code::InvalidArgument, "update without entity".into())),
        };
        let named =
            p4info_map::entry_from_p4(index, entry).map_err(|m| err(Code::InvalidArgument, m))?;
        let typed =
            Entry::from_named(&named).map_err(|e| err(Code::InvalidArgument, e.to_string()))?;
        Ok((op, typed))
    }
}

pub(super) fn table_error(e: &TableError) -> p4::Error {
    let code = match e {
        TableError::InvalidArgument(_) => Code::InvalidArgument,
        TableError::AlreadyExists(_) => Code::AlreadyExists,
        TableError::NotFound(_) => Code::NotFound,
        TableError::Full { .. } => Code::ResourceExhausted,
    };
    p4::Error {
        canonical_code: code as i32,
        message: e.to_string(),
        ..Default::default()
    }
}

/// A failed batch: one `p4.v1.Error` per update in the status details.
pub(super) fn batch_status(errors: Vec<p4::Error>) -> Status {
    let failed: Vec<&str> = errors
        .iter()
        .filter(|e| e.canonical_code != Code::Ok as i32)
        .map(|e| e.message.as_str())
        .collect();
    let message = format!(
        "{} of {} updates failed: {}",
        failed.len(),
        errors.len(),
        failed.join("; ")
    );
    let details = rpc::Status {
        code: Code::Unknown as i32,
        message: message.clone(),
        details: errors
            .iter()
            .map(|e| prost_types::Any {
                type_url: "type.googleapis.com/p4.v1.Error".into(),
                value: e.encode_to_vec(),
            })
            .collect(),
    };
    Status::with_details(
        Code::Unknown,
        message,
        tonic::codegen::Bytes::from(details.encode_to_vec()),
    )
}
