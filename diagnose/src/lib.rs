//! Trace diagnosis with INT: which part of a slow request was service,
//! fabric queueing, loss or end host, and which link, service or host is
//! the culprit.
//!
//! Data flow: span files → [`spans`] → [`rpc`] edges (client joined to
//! server, hosts from [`hosts`]) → [`path`] (the routes deploy installs) →
//! [`evidence`] (the collector's INT samples at each crossing) →
//! [`attribution`] per edge → [`culprits`] → [`report`]. [`synth`] makes
//! workloads with known faults; [`score`] checks a diagnosis against them.

pub mod attribution;
mod baseline;
mod clocks;
pub mod critical;
pub mod culprits;
pub mod diagnosis;
pub mod eval;
pub mod evidence;
pub mod hosts;
pub mod latency;
pub mod path;
pub mod reconstruct;
pub mod rejects;
pub mod report;
pub mod rpc;
pub mod score;
pub mod spans;
pub mod stats;
pub mod synth;
pub mod window;

pub use diagnosis::{diagnose, DiagnoseError, Diagnosis, Request};
pub use window::SpanWindow;
