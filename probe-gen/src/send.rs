//! Sending probes on a plan's paths: which paths this sender serves, one
//! paced run per generator switch, and following the plan file through
//! replans.

use crate::config::{Out, Pace};
use crate::frames::ProbeSource;
use crate::inject::{self, InjectError};
use crate::selection::{select, PathSelection};
use crate::stats::Report;
use intpath_core::plan::{FollowedPlan, Plan, PlanError, ProbePath};
use intpath_core::topo::Topology;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A `probe-gen send` run.
#[derive(Debug, Clone)]
pub struct SendConfig {
    /// The plan file.
    pub plan: PathBuf,
    pub selection: PathSelection,
    /// Probe only the paths whose first switch has no host in `topo`, as
    /// packet-outs at that switch.
    pub hostless: bool,
    /// Keep following the plan file: send on each new plan's paths.
    pub follow: bool,
    /// The plan's topology (which switches have hosts).
    pub topo: Option<Topology>,
    /// The probes' IP destination.
    pub collector: Ipv4Addr,
    /// Records a probe may collect.
    pub hops: u8,
    pub out: Out,
    pub pace: Pace,
}

/// Why a send stopped early or could not start.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error(transparent)]
    Inject(#[from] InjectError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Idle(#[from] Idle),
    #[error(
        "the selected paths start at {} switches ({}), but probes enter at one; \
         pick one with --generator (one probe-gen per generator switch)",
        .0.len(),
        .0.join(", ")
    )]
    Generators(Vec<String>),
    #[error("the selected paths start at {generator}, not at --switch {switch}")]
    NotAtSwitch { generator: String, switch: String },
    #[error("a sender panicked")]
    SenderPanicked,
    #[error("the plan watcher panicked")]
    WatcherPanicked,
}

/// Why a plan leaves this sender nothing to send.
#[derive(Debug, thiserror::Error)]
pub enum Idle {
    /// Other senders serve the plan.
    #[error("{0}")]
    Nothing(String),
    /// Paths nobody will send on: an error, not a wait.
    #[error(
        "paths {ids} start at switches without a host ({switches}) and nobody sends on them: \
         give --switch-map to inject their probes as P4Runtime packet-outs"
    )]
    Unsent { ids: String, switches: String },
}

/// Sends until the pace's limit or `stop`: on the plan file's paths, or
/// with `follow` on whichever plan is in force.
pub fn send(a: &SendConfig, stop: &AtomicBool) -> Result<Report, SendError> {
    if a.follow {
        return follow(a, stop);
    }
    let plan = Plan::load(&a.plan)?;
    let paths = to_probe(a, &plan)?;
    probe_all(a, &paths, stop, a.pace.duration)
}

/// The paths of `plan` this sender probes.
pub fn to_probe<'p>(a: &SendConfig, plan: &'p Plan) -> Result<Vec<&'p ProbePath>, Idle> {
    let named = |e: &dyn std::fmt::Display| Idle::Nothing(format!("{}: {e}", a.plan.display()));
    let paths = select(plan, &a.selection).map_err(|e| named(&e))?;
    let Some(topo) = a.topo.as_ref().filter(|_| a.hostless) else {
        return Ok(paths);
    };
    let ids = intpath_planner::hostless_ends(topo, plan).generators;
    let paths: Vec<&ProbePath> = paths.into_iter().filter(|p| ids.contains(&p.id)).collect();
    if paths.is_empty() {
        return Err(named(&"every path starts at a switch with a host"));
    }
    if a.out.switch_map.is_none() {
        return Err(Idle::Unsent {
            ids: paths
                .iter()
                .map(|p| p.id.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            switches: generators(&paths).join(", "),
        });
    }
    Ok(paths)
}

/// The distinct first switches of `paths`, sorted.
fn generators<'p>(paths: &[&'p ProbePath]) -> Vec<&'p str> {
    let mut switches: Vec<&str> = paths.iter().map(|p| p.generator()).collect();
    switches.sort_unstable();
    switches.dedup();
    switches
}

/// Probes the plan in force, moving to the new paths whenever the plan
/// file is rewritten (by `intpath watch` after a replan). A plan with none
/// of the selected paths leaves this sender idle until the next one.
fn follow(a: &SendConfig, interrupted: &AtomicBool) -> Result<Report, SendError> {
    let (mut followed, mut plan) = FollowedPlan::open(&a.plan)?;
    let started = Instant::now();
    let mut total = Report::default();
    loop {
        let left = a.pace.duration.map(|d| d - started.elapsed().as_secs_f64());
        if left.is_some_and(|l| l <= 0.0) || interrupted.load(Ordering::Relaxed) {
            break;
        }
        // Set when this plan's sending must end: Ctrl-C or a new plan.
        let halt = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let (report, next) = std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    if interrupted.load(Ordering::Relaxed) {
                        halt.store(true, Ordering::Relaxed);
                        return None;
                    }
                    match followed.poll() {
                        Some(Ok(p)) => {
                            tracing::info!("{} changed: moving to the new plan", a.plan.display());
                            halt.store(true, Ordering::Relaxed);
                            return Some(p);
                        }
                        Some(Err(e)) => tracing::warn!("keeping the current plan: {e}"),
                        None => {}
                    }
                }
                None
            });
            let report = match to_probe(a, &plan) {
                Ok(paths) => probe_all(a, &paths, &halt, left),
                Err(e) => {
                    match e {
                        Idle::Nothing(_) => tracing::info!("{e}; waiting for a new plan"),
                        Idle::Unsent { .. } => tracing::error!("{e}"),
                    }
                    let deadline = left.map(|l| Instant::now() + Duration::from_secs_f64(l));
                    while !halt.load(Ordering::Relaxed)
                        && deadline.is_none_or(|d| Instant::now() < d)
                    {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Ok(Report::default())
                }
            };
            done.store(true, Ordering::Relaxed);
            (report, watcher.join())
        });
        let report = report?;
        total.sent += report.sent;
        total.errors += report.errors;
        match next {
            Ok(Some(p)) => plan = p,
            Ok(None) => break,
            Err(_) => return Err(SendError::WatcherPanicked),
        }
    }
    total.elapsed = started.elapsed();
    total.interrupted = interrupted.load(Ordering::Relaxed);
    Ok(total)
}

/// Sends probes on `paths`: out of the one sender's interface or switch,
/// or with `hostless` as packet-outs at each path's first switch, one
/// P4Runtime session per switch, side by side.
fn probe_all(
    a: &SendConfig,
    paths: &[&ProbePath],
    stop: &AtomicBool,
    duration: Option<f64>,
) -> Result<Report, SendError> {
    if !a.hostless {
        return probe(a, &a.out, paths, stop, duration);
    }
    let mut by_switch: std::collections::BTreeMap<&str, Vec<&ProbePath>> = Default::default();
    for p in paths {
        by_switch.entry(p.generator()).or_default().push(p);
    }
    let reports: Vec<Result<Report, SendError>> = std::thread::scope(|s| {
        let senders: Vec<_> = by_switch
            .into_iter()
            .map(|(sw, paths)| {
                let out = Out {
                    switch: Some(sw.to_owned()),
                    ..a.out.clone()
                };
                s.spawn(move || probe(a, &out, &paths, stop, duration))
            })
            .collect();
        senders
            .into_iter()
            .map(|t| t.join().unwrap_or(Err(SendError::SenderPanicked)))
            .collect()
    });
    let mut total = Report::default();
    for r in reports {
        let r = r?;
        total.sent += r.sent;
        total.errors += r.errors;
        total.elapsed = total.elapsed.max(r.elapsed);
        total.interrupted |= r.interrupted;
    }
    Ok(total)
}

/// Sends probes on `paths` (all from one generator) out `out` until the
/// pace's limit, `duration` seconds, or `stop`.
fn probe(
    a: &SendConfig,
    out: &Out,
    paths: &[&ProbePath],
    stop: &AtomicBool,
    duration: Option<f64>,
) -> Result<Report, SendError> {
    let generators = generators(paths);
    if generators.len() > 1 {
        return Err(SendError::Generators(
            generators.iter().map(|g| g.to_string()).collect(),
        ));
    }
    if let Some(sw) = out.switch.as_deref().filter(|sw| *sw != generators[0]) {
        return Err(SendError::NotAtSwitch {
            generator: generators[0].to_owned(),
            switch: sw.to_owned(),
        });
    }
    let (via, ends) = inject::endpoints(out)?;
    let ids: Vec<u16> = paths.iter().map(|p| p.id).collect();
    tracing::info!(
        "probing {} path(s) from {} via {via} towards {} at {} pps each",
        ids.len(),
        generators[0],
        a.collector,
        a.pace.rate
    );
    let mut source = ProbeSource::new(&ids, ends, a.collector, a.hops);
    Ok(inject::run(
        out,
        via,
        &a.pace,
        duration,
        ids.len(),
        &mut source,
        stop,
    )?)
}
