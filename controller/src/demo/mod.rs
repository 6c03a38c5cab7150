//! The parts of `intpath demo`, the one-command end-to-end run: where to
//! congest the network, the Mininet network itself, the processes that run
//! in it (collector and senders), what is read back from the telemetry, and
//! the report and pictures at the end; with `--workload`, the microservices,
//! their load and the fault injected into them.

pub mod bottleneck;
pub mod collector;
pub mod fault;
pub mod heatmaps;
pub mod network;
pub mod procs;
pub mod report;
pub mod senders;
pub mod telemetry;
pub mod workload;
