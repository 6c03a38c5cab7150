//! The intpath collector: probes in, per-hop telemetry into the store
//! (`intpath-store`) out, spans received over OTLP alongside, and the
//! counters of both for Prometheus.
//!
//! Probes flow `capture` → `parse` → `validate` (plan and `plausible`
//! numbers) → `ingest` (per-link and per-path aggregation, loss from
//! `sequence` numbers) → the store's batch writer. `otlp` receives spans
//! over OTLP/HTTP and gRPC into the same database; `metrics` serves what
//! both counted. Reading the telemetry back (queries, heatmaps, a
//! diagnosis) is the store's and `intpath-plot`'s business, not this
//! crate's.

pub mod capture;
pub mod ingest;
pub mod metrics;
pub mod otlp;
pub mod parse;
pub mod plausible;
pub mod sequence;
pub mod serve;
pub mod synth;
pub mod validate;

pub use parse::{parse_frame, parse_packet_in, parse_udp_payload, Probe, Reject, RejectCounts};
pub use plausible::Plausibility;
pub use validate::Validator;
