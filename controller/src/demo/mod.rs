//! The parts of `intpath demo`, the one-command end-to-end run: where to
//! congest the network, the Mininet network itself, and the processes that
//! run in it.

pub mod bottleneck;
pub mod network;
pub mod procs;
pub mod telemetry;
