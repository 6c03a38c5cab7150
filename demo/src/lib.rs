//! `intpath demo`, the one-command end-to-end run, as a library taking a
//! [`DemoConfig`].
//!
//! Without a workload ([`congested`]) the run congests one egress port
//! and must find it as the hottest link; with one ([`workload`]) it runs
//! microservices, switches a fault on halfway and must diagnose it. Both
//! share their stages ([`setup`]): where to congest the network
//! ([`bottleneck`]), the Mininet network itself ([`network`]), the
//! processes that run in it ([`procs`], [`collector`], [`senders`]) and
//! what is read back from the telemetry ([`telemetry`]). The same stages
//! keep a network up for the user's own application in [`lab`].

pub mod bottleneck;
pub mod collector;
mod config;
pub mod congested;
pub mod counters;
pub mod lab;
pub mod network;
pub mod procs;
pub mod senders;
pub mod setup;
pub mod telemetry;
pub mod workload;

pub use config::{DemoConfig, Rates, SwitchKind, WorkloadConfig};

/// Runs the demo `config` asks for; an error unless its verdict holds.
pub fn run(config: &DemoConfig) -> anyhow::Result<()> {
    match &config.workload {
        Some(w) => workload::run(config, w),
        None => congested::run(config),
    }
}
