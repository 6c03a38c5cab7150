//! The Write RPC: P4Runtime updates to typed table writes, applied with the
//! batch's atomicity, and the errors of a refused batch.

use super::Service;
use crate::p4info_map;
use crate::switch::Commit;
use crate::tables::{Entry, TableError, WriteOp};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema;
use p4::write_request::Atomicity;
use prost::Message;
use tonic::{Code, Status};

/// Bytes of `grpc-message` plus the base64 `grpc-status-details-bin` a
/// refused batch may send. gRPC C-core clients (grpcio, PI's tools) refuse
/// response metadata over 8 KiB at random and always over 16 KiB, tonic
/// clients over 16 KiB; either way the user would see no reason at all.
const STATUS_BUDGET: usize = 7 * 1024;
/// Longest top-level message of a refused batch.
const MESSAGE_MAX: usize = 1024;
/// Longest copy of it inside the details (the bytes go to the errors).
const DETAILS_MESSAGE_MAX: usize = 200;
/// Failures named in the top-level message.
const NAMED_FAILURES: usize = 5;
/// Longest per-update message once the details have to be shortened.
const SHORT_MESSAGE: usize = 60;

fn error(code: Code, message: impl Into<String>) -> p4::Error {
    p4::Error {
        canonical_code: code as i32,
        message: message.into(),
        ..Default::default()
    }
}

impl Service {
    /// Applies a batch: CONTINUE_ON_ERROR applies every update that can be,
    /// ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC all of them or none. The
    /// updates go to a copy of the tables swapped in as a whole, so even a
    /// CONTINUE_ON_ERROR batch reaches the data plane at once.
    pub(super) fn write_batch(&self, req: &p4::WriteRequest) -> Result<(), Status> {
        let all_or_none = match Atomicity::try_from(req.atomicity) {
            Ok(Atomicity::ContinueOnError) => false,
            Ok(Atomicity::RollbackOnError | Atomicity::DataplaneAtomic) => true,
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "unknown atomicity {}",
                    req.atomicity
                )))
            }
        };
        let index = self.index();
        let parsed: Vec<Result<(WriteOp, Entry), p4::Error>> =
            req.updates.iter().map(|u| self.update(&index, u)).collect();
        let valid: Vec<(WriteOp, Entry)> = parsed
            .iter()
            .filter_map(|r| r.as_ref().ok().copied())
            .collect();
        let commit = match (all_or_none, valid.len() == parsed.len()) {
            (false, _) => Commit::Always,
            (true, true) => Commit::IfAllApplied,
            // Still tried on a copy, so every update gets its own verdict.
            (true, false) => Commit::Never,
        };
        let results = self.core.write(&valid, commit);
        let committed = commit.swaps(&results);
        let mut applied = results.into_iter();
        let errors: Vec<p4::Error> = parsed
            .into_iter()
            .map(|r| match r {
                Err(e) => e,
                Ok(_) => match applied.next() {
                    Some(Err(e)) => table_error(&e),
                    _ if committed => p4::Error::default(),
                    _ => error(Code::Aborted, "rolled back with its batch"),
                },
            })
            .collect();
        if errors.iter().all(|e| e.canonical_code == Code::Ok as i32) {
            return Ok(());
        }
        for e in errors.iter().filter(|e| e.canonical_code != 0) {
            tracing::debug!(code = e.canonical_code, "write refused: {}", e.message);
        }
        Err(batch_status(errors, all_or_none))
    }

    fn update(&self, index: &P4InfoIndex, u: &p4::Update) -> Result<(WriteOp, Entry), p4::Error> {
        let op = match p4::update::Type::try_from(u.r#type) {
            Ok(p4::update::Type::Insert) => WriteOp::Insert,
            Ok(p4::update::Type::Modify) => WriteOp::Modify,
            Ok(p4::update::Type::Delete) => WriteOp::Delete,
            _ => return Err(error(Code::InvalidArgument, "update type unspecified")),
        };
        let entry = match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
            Some(p4::entity::Entity::TableEntry(t)) => t,
            Some(_) => {
                return Err(error(
                    Code::Unimplemented,
                    "only table entries can be written",
                ))
            }
            None => return Err(error(Code::InvalidArgument, "update without entity")),
        };
        check_entry(index, op, entry)?;
        let named =
            p4info_map::entry_from_p4(index, entry).map_err(|m| error(Code::InvalidArgument, m))?;
        // MODIFY of a default entry without an action restores the
        // program's default: `set_switch_id(0)` in sr_int.p4.
        if entry.action.is_none() && entry.is_default_action && named.table == schema::SWITCH_CONFIG
        {
            return Ok((op, Entry::SwitchConfigDefault(0)));
        }
        let typed =
            Entry::from_named(&named).map_err(|e| error(Code::InvalidArgument, e.to_string()))?;
        Ok((op, typed))
    }
}

/// The parts of a written entry that P4Runtime constrains beyond its key
/// and action: presence of the action, the priority, and features
/// sr_int.p4's tables do not have.
fn check_entry(index: &P4InfoIndex, op: WriteOp, e: &p4::TableEntry) -> Result<(), p4::Error> {
    let invalid = |m: String| Err(error(Code::InvalidArgument, m));
    let t = index
        .table_by_id(e.table_id)
        .map_err(|x| error(Code::NotFound, x.to_string()))?;
    let reset = e.is_default_action && op == WriteOp::Modify;
    if e.action.is_none() && op != WriteOp::Delete && !reset {
        let op = format!("{op:?}").to_uppercase();
        return invalid(format!("{op} into {} without an action", t.name));
    }
    let needs_priority = t.needs_priority() && !e.is_default_action;
    if e.priority < 0 {
        return invalid(format!("{}: negative priority {}", t.name, e.priority));
    }
    if needs_priority && e.priority == 0 {
        return invalid(format!("{}: entries need a priority", t.name));
    }
    if !needs_priority && e.priority != 0 {
        return invalid(format!(
            "{}: priority {} given, but the table has no ternary, range or optional field",
            t.name, e.priority
        ));
    }
    if e.idle_timeout_ns != 0 {
        return invalid(format!("{}: the table has no idle timeout", t.name));
    }
    if e.meter_config.is_some() || e.counter_data.is_some() || e.meter_counter_data.is_some() {
        return invalid(format!(
            "{}: the table has no direct meter or counter",
            t.name
        ));
    }
    if !e.metadata.is_empty() {
        return Err(error(
            Code::Unimplemented,
            format!("{}: entry metadata is not stored", t.name),
        ));
    }
    Ok(())
}

pub(super) fn table_error(e: &TableError) -> p4::Error {
    let code = match e {
        TableError::InvalidArgument(_) => Code::InvalidArgument,
        TableError::AlreadyExists(_) => Code::AlreadyExists,
        TableError::NotFound(_) => Code::NotFound,
        TableError::Full { .. } => Code::ResourceExhausted,
    };
    error(code, e.to_string())
}

/// `s` cut to at most `max` bytes on a character boundary, marked when cut.
fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// A refused batch as P4Runtime reports it: UNKNOWN with one `p4.v1.Error`
/// per update, in order (OK for those applied). The top-level message
/// counts the failures by code and names the first ones. Within
/// [`STATUS_BUDGET`] the details carry every message; beyond it the
/// messages are shortened, and when even one bare error per update does
/// not fit, the details are left out and the message says so.
pub(super) fn batch_status(errors: Vec<p4::Error>, rolled_back: bool) -> Status {
    let message = summary(&errors, rolled_back);
    let fits = |s: &rpc::Status| s.encoded_len().div_ceil(3) * 4 + message.len() <= STATUS_BUDGET;
    let full = details(&message, errors.iter().cloned());
    if fits(&full) {
        return with_details(message, full);
    }
    let short = details(
        &message,
        errors.iter().map(|e| p4::Error {
            message: clip(&e.message, SHORT_MESSAGE),
            ..e.clone()
        }),
    );
    if fits(&short) {
        return with_details(message, short);
    }
    let bare = details(
        &message,
        errors
            .iter()
            .map(|e| error(Code::from_i32(e.canonical_code), "")),
    );
    if fits(&bare) {
        return with_details(message, bare);
    }
    let message = clip(
        &format!(
            "{message} (per-update details left out: {} updates do not fit the {} KiB status limit; smaller batches get one error per update)",
            errors.len(),
            STATUS_BUDGET / 1024
        ),
        MESSAGE_MAX + 200,
    );
    Status::new(Code::Unknown, message)
}

fn details(message: &str, errors: impl Iterator<Item = p4::Error>) -> rpc::Status {
    rpc::Status {
        code: Code::Unknown as i32,
        message: clip(message, DETAILS_MESSAGE_MAX),
        details: errors
            .map(|e| prost_types::Any {
                type_url: "type.googleapis.com/p4.v1.Error".into(),
                value: e.encode_to_vec(),
            })
            .collect(),
    }
}

fn with_details(message: String, status: rpc::Status) -> Status {
    Status::with_details(
        Code::Unknown,
        message,
        tonic::codegen::Bytes::from(status.encode_to_vec()),
    )
}

/// "3 of 5 updates failed (ALREADY_EXISTS 2, INVALID_ARGUMENT 1): #0
/// ALREADY_EXISTS: ...; #3 ...", at most [`MESSAGE_MAX`] bytes.
fn summary(errors: &[p4::Error], rolled_back: bool) -> String {
    let failed: Vec<(usize, &p4::Error)> = errors
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.canonical_code != Code::Ok as i32 && e.canonical_code != Code::Aborted as i32
        })
        .collect();
    let mut by_code = std::collections::BTreeMap::new();
    for (_, e) in &failed {
        *by_code.entry(e.canonical_code).or_insert(0usize) += 1;
    }
    let counts: Vec<String> = by_code
        .iter()
        .map(|(c, n)| format!("{} {n}", code_name(*c)))
        .collect();
    let first: Vec<String> = failed
        .iter()
        .take(NAMED_FAILURES)
        .map(|(i, e)| {
            format!(
                "#{i} {}: {}",
                code_name(e.canonical_code),
                clip(&e.message, 150)
            )
        })
        .collect();
    let more = failed.len().saturating_sub(NAMED_FAILURES);
    let mut s = format!(
        "{} of {} updates failed ({}){}: {}",
        failed.len(),
        errors.len(),
        counts.join(", "),
        if rolled_back {
            ", the batch was rolled back"
        } else {
            ""
        },
        first.join("; ")
    );
    if more > 0 {
        s.push_str(&format!("; and {more} more"));
    }
    clip(&s, MESSAGE_MAX)
}

/// A status code as the P4Runtime spec writes it (`ALREADY_EXISTS`).
fn code_name(code: i32) -> String {
    let words = format!("{:?}", Code::from_i32(code));
    let mut out = String::new();
    for (i, c) in words.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failures(n: usize, message: &str) -> Vec<p4::Error> {
        (0..n)
            .map(|i| match i % 3 {
                0 => p4::Error::default(),
                _ => error(Code::AlreadyExists, format!("{message} {i}")),
            })
            .collect()
    }

    fn metadata_bytes(s: &Status) -> usize {
        s.details().len().div_ceil(3) * 4 + s.message().len()
    }

    #[test]
    fn small_batches_keep_every_message() {
        let s = batch_status(failures(6, "entry already exists in sink"), false);
        let d = rpc::Status::decode(s.details()).unwrap();
        assert_eq!(d.details.len(), 6);
        let e = p4::Error::decode(d.details[1].value.as_slice()).unwrap();
        assert_eq!(e.message, "entry already exists in sink 1");
        assert!(
            s.message()
                .starts_with("4 of 6 updates failed (ALREADY_EXISTS 4): #1 ALREADY_EXISTS:"),
            "{}",
            s.message()
        );
    }

    #[test]
    fn large_batches_fit_the_budget_and_still_say_why() {
        let long = "x".repeat(200);
        for n in [50, 100, 150, 1000, 2000, 20_000] {
            let s = batch_status(failures(n, &long), false);
            assert!(
                metadata_bytes(&s) <= STATUS_BUDGET,
                "{n}: {}",
                metadata_bytes(&s)
            );
            assert_eq!(s.code(), Code::Unknown);
            assert!(
                s.message().contains("#1 ALREADY_EXISTS: xxx"),
                "{}",
                s.message()
            );
            let d = rpc::Status::decode(s.details()).unwrap_or_default();
            assert!(
                d.details.len() == n || d.details.is_empty(),
                "one error per update or none"
            );
        }
        // A few hundred updates still get one error each.
        let d = rpc::Status::decode(batch_status(failures(100, &long), false).details()).unwrap();
        assert_eq!(d.details.len(), 100);
        let s = batch_status(failures(2000, &long), false);
        assert!(
            s.message().contains("per-update details left out"),
            "{}",
            s.message()
        );
    }

    #[test]
    fn code_names_are_the_specs() {
        assert_eq!(code_name(Code::InvalidArgument as i32), "INVALID_ARGUMENT");
        assert_eq!(code_name(Code::Ok as i32), "OK");
    }
}
