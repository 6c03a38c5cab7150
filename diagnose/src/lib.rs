//! Trace diagnosis with INT: which part of a slow request was service,
//! fabric queueing, loss or end host, and which service, link, host or pair
//! of hosts is the culprit; with no INT, from the traces alone.
//!
//! A pipeline: [`load`] reads (spans from a file or the store, and the
//! collector run that goes with them: its topology, plan and INT) and is
//! the only step that touches the store; [`analyze`] is pure: spans →
//! [`rpc`] edges, placed on [`hosts`] by the OpenTelemetry conventions →
//! [`path`]s (the routes deploy installs) → INT [`evidence`] at each
//! crossing → [`attribution`] per edge. A [`Diagnosis`] then ranks its
//! [`culprits`] (tested against the run's own variation; none when nothing
//! stands out), finds each trace's [`critical`] path, and is printed by
//! [`report`]. [`run`] is the blocking call a command line makes.
//!
//! Two methods of their own read other inputs: [`reconstruct`] (parent
//! links from timestamps alone) and [`latency`] (response latency from one
//! direction of packets).

mod analyze;
pub mod attribution;
pub mod critical;
pub mod culprits;
pub mod evidence;
pub mod export;
pub mod hosts;
pub mod latency;
mod load;
pub mod path;
pub mod reconstruct;
pub mod rejects;
pub mod report;
mod request;
pub mod rpc;
pub mod spans;
mod window;

pub use analyze::{analyze, Diagnosis};
pub use attribution::Options;
pub use load::{load, plan_links, Inputs, Int};
pub use request::{Baseline, DiagnoseError, Request};
pub use window::{SpanWindow, RUN_SLACK_NS, RUN_TAIL_NS};

/// Loads and analyses `req` with `options` on a runtime of its own: what a
/// command line calls. With `req.strict`, any span or edge rejected is an
/// error.
pub fn run(req: &Request, options: &Options) -> Result<Diagnosis, DiagnoseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(DiagnoseError::Runtime)?;
    let inputs = rt.block_on(load(req))?;
    let d = analyze(&inputs, options)?;
    if req.strict && d.rejects.total() > 0 {
        let reason = d.rejects.main_reason().unwrap_or_default().to_owned();
        return Err(DiagnoseError::Strict(d.rejects.total(), reason));
    }
    Ok(d)
}
