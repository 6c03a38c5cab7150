//! The intpath collector: probes in, per-hop telemetry in SQLite out, and the
//! heatmaps and queries a diagnosis reads from it.
//!
//! Probes flow `capture` → `parse` → `validate` (plan and `plausible`
//! numbers) → `ingest` (per-link and
//! per-path aggregation, loss from sequence numbers) → `store` (SQLite).
//! `query` and `heatmap` read the database only, so they work on a copy of
//! it long after the run; `report` and `heatmap::render` are the typed calls
//! behind `query` and `heatmap` on both command lines, whose clap flags live
//! in `flags` (feature `cli`, for the two binaries only). `otlp` receives
//! spans over OTLP/HTTP into the same database (`store::spans`).

pub mod capture;
pub mod evidence;
#[cfg(feature = "cli")]
pub mod flags;
pub mod heatmap;
pub mod ingest;
pub mod links;
pub mod metrics;
pub mod otlp;
pub mod parse;
pub mod plausible;
pub mod query;
pub mod report;
pub mod sequence;
pub mod store;
pub mod synth;
pub mod table;
pub mod validate;

pub use links::LinkMap;
pub use parse::{parse_frame, parse_packet_in, parse_udp_payload, Probe, Reject, RejectCounts};
pub use plausible::Plausibility;
pub use store::Store;
pub use validate::Validator;
