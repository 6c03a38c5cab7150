//! Workloads with ground truth: a DeathStarBench-like application placed on
//! the hosts of a topology, its RPCs crossing per-link queues that the INT
//! probes of a real plan sample into a real collector database, with faults
//! whose effect on every edge is known.

pub mod app;
mod counters;
mod fabric;
pub mod faults;
mod otlp_out;
pub mod packets;
mod pool;
mod run;
mod sim;
mod targets;
pub mod world;

pub use app::App;
pub use faults::{FaultKind, FaultSpec};
pub use run::{generate, Config, SynthError, Truth, TruthEdge, TruthFault, T0_NS};
pub use world::World;

/// What diagnoses a workload [`generate`] wrote into `dir`: its OTLP file,
/// with the INT of its database (whose run records the topology and plan).
pub fn request(dir: &std::path::Path) -> intpath_diagnose::Request {
    intpath_diagnose::Request {
        db: Some(dir.join("telemetry.db").into()),
        ..intpath_diagnose::Request::of_traces(dir.join("traces.otlp.json"))
    }
}
