//! intpath's evaluations, regenerated:
//!
//! - [`paper`]: the INT-path paper's planning figures (one CSV and one PNG
//!   each), `intpath eval paper`.
//! - [`synth`]: workloads with known truth for the trace diagnosis: an
//!   application's RPCs through per-link queues that the INT probes of a
//!   real plan sample into a real collector database, with faults whose
//!   effect on every call is known (`intpath diagnose synth`); and packet
//!   timings with known response latencies for Pirate.
//! - [`score`]: a diagnosis held against that truth.
//! - [`matrix`]: the scenario matrices of the diagnosis, the trace
//!   reconstruction and Pirate, as `intpath eval diagnose` and `intpath
//!   eval reconstruct` run and summarise them.

pub mod matrix;
pub mod paper;
pub mod score;
pub mod synth;
