//! The one step that reads: spans from a file or the store, and, where the
//! database holds a collector run that goes with them, that run's topology,
//! plan and INT evidence. The store is opened once; everything after this
//! ([`crate::analyze`]) is pure.

use crate::request::{Baseline, DiagnoseError, Request};
use crate::spans::{self, Format, Parsed};
use crate::window::SpanWindow;
use intpath_core::link::DirLink;
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_store::counters::{self, LinkCount};
use intpath_store::samples::{self, LinkSample, PathLoss, Run};
use intpath_store::Store;
use std::collections::HashMap;
use std::path::Path;

/// Everything a diagnosis reads.
#[derive(Debug)]
pub struct Inputs {
    /// The spans, and what was dropped reading them.
    pub spans: Parsed,
    /// The topology hosts are placed on and paths followed in; `None`:
    /// hosts are the addresses the spans give.
    pub topo: Option<Topology>,
    pub host_map: HashMap<String, String>,
    /// The collector run's INT; `None` for a diagnosis from traces alone.
    pub int: Option<Int>,
    /// Why there is no INT, when there is none (said in the output).
    pub without_int: Option<String>,
    /// The spans of a healthy period to compare with ([`Request::baseline`]).
    pub baseline: Option<Parsed>,
}

/// One collector run's evidence.
#[derive(Debug)]
pub struct Int {
    pub run: Run,
    /// The directed links the plan in force measures.
    pub measured: Vec<DirLink>,
    pub samples: Vec<LinkSample>,
    pub losses: Vec<PathLoss>,
    /// Per run link id: what its ends' port counters counted over the run
    /// (`None` for a link the switches were not read for).
    pub counts: Vec<Option<LinkCount>>,
}

fn read_file(path: &Path, format: Option<Format>) -> Result<Parsed, DiagnoseError> {
    let name = path.display().to_string();
    let text = spans::read_file(path).map_err(|e| DiagnoseError::Read(name.clone(), e))?;
    tracing::info!("{name}: {} MB of spans", text.len() / 1_000_000);
    spans::parse(&text, format).map_err(|e| DiagnoseError::Spans(name, e))
}

/// The stored spans of `window` (whose run is `run`).
async fn read_store(
    store: &Store,
    window: SpanWindow,
    run: Option<&Run>,
) -> Result<Parsed, DiagnoseError> {
    let db = store.db().to_string();
    let (since, until) = window.bounds(run);
    let stored = store.spans_between(since, until).await?;
    if stored.spans.is_empty() {
        let any = store.spans_between(i64::MIN, i64::MAX).await?;
        return Err(match (any.spans.is_empty(), run) {
            (true, _) => DiagnoseError::NoSpans(db),
            (false, Some(r)) => DiagnoseError::NoSpansInWindow(db, format!("run {}", r.id)),
            (false, None) => DiagnoseError::NoSpansInWindow(db, format!("[{since}, {until}] ns")),
        });
    }
    tracing::info!("{db}: {} stored spans", stored.spans.len());
    Ok(spans::from_store(&stored))
}

/// The healthy period's spans `from` names.
async fn read_baseline(
    from: &Baseline,
    req: &Request,
    store: Option<&Store>,
    runs: &[Run],
) -> Result<Parsed, DiagnoseError> {
    match (from, store) {
        (Baseline::File(path), _) => read_file(path, req.format),
        (Baseline::Stored(window), Some(store)) => {
            let run = window
                .run(runs)
                .map_err(|e| DiagnoseError::Window(db_name(req), e))?;
            read_store(store, *window, run).await
        }
        (Baseline::Stored(_), None) => Err(DiagnoseError::BaselineWithoutDb),
    }
}

/// The database `req` names, for messages ("" without one).
fn db_name(req: &Request) -> String {
    req.db.as_ref().map(|d| d.to_string()).unwrap_or_default()
}

/// First span start and last span end of `p`.
fn extent(p: &Parsed) -> Option<(i64, i64)> {
    let lo = p.spans.iter().map(|s| s.start_ns).min()?;
    let hi = p.spans.iter().map(|s| s.end_ns).max()?;
    Some((lo, hi))
}

/// Reads what `req` names.
pub async fn load(req: &Request) -> Result<Inputs, DiagnoseError> {
    let store = match &req.db {
        Some(db) => Some(Store::open_existing(db.clone()).await?),
        None => None,
    };
    let result = read(req, store.as_ref()).await;
    if let Some(s) = store {
        s.close().await;
    }
    result
}

async fn read(req: &Request, store: Option<&Store>) -> Result<Inputs, DiagnoseError> {
    let runs = match store {
        Some(s) => samples::runs(s).await?,
        None => Vec::new(),
    };
    let window_run = req
        .window
        .run(&runs)
        .map_err(|e| DiagnoseError::Window(db_name(req), e))?
        .cloned();
    let spans = match (&req.traces, store) {
        (Some(path), _) => read_file(path, req.format)?,
        (None, Some(s)) => read_store(s, req.window, window_run.as_ref()).await?,
        (None, None) => return Err(DiagnoseError::NoSource),
    };
    let baseline = match &req.baseline {
        Some(from) => Some(
            read_baseline(from, req, store, &runs)
                .await
                .map_err(|e| DiagnoseError::Baseline(Box::new(e)))?,
        ),
        None => None,
    };
    // The run whose INT goes with the spans: the window's for stored spans
    // it picked, or the one their time overlaps most (a file's spans may
    // come from any time).
    let probed = runs.iter().any(|r| r.span_ns.is_some());
    let run = match (req.no_int, window_run) {
        (true, _) => None,
        (false, Some(r)) if req.traces.is_none() => Some(r),
        (false, _) => {
            let (lo, hi) = extent(&spans).unwrap_or((i64::MIN, i64::MAX));
            samples::overlapping_most(runs, lo, hi)
        }
    };
    let without_int = match (&run, req.no_int, store) {
        (Some(_), ..) => None,
        (None, true, _) => Some("asked for (--no-int)".to_owned()),
        (None, false, Some(_)) if probed => Some(format!(
            "no collector run in {} shares a moment with the spans",
            db_name(req)
        )),
        (None, false, Some(_)) => Some(format!(
            "{} holds no collector run with probes",
            db_name(req)
        )),
        (None, false, None) => Some("no telemetry database given (--db)".to_owned()),
    };
    let topo = topology(req, run.as_ref())?;
    let int = match (run, store, &topo) {
        (Some(run), Some(store), Some(topo)) => Some(evidence(req, store, run, topo).await?),
        _ => None,
    };
    Ok(Inputs {
        spans,
        topo,
        host_map: req.host_map.clone(),
        int,
        without_int,
        baseline,
    })
}

/// The topology: the run's own, the one given checked against it, or (no
/// run) the one given if any.
fn topology(req: &Request, run: Option<&Run>) -> Result<Option<Topology>, DiagnoseError> {
    let Some(run) = run else {
        return Ok(req.topo.clone());
    };
    let recorded = match &run.topology {
        Some(json) => Some(
            Topology::from_json(json, &format!("run {}", run.id))
                .map_err(|e| DiagnoseError::RecordedTopology(run.id, e))?,
        ),
        None => None,
    };
    match (&req.topo, recorded) {
        (Some(given), Some(recorded)) => match given.difference(&recorded) {
            None => Ok(Some(given.clone())),
            Some(why) => Err(DiagnoseError::TopologyMismatch {
                given: given.origin().to_owned(),
                run: run.id,
                recorded: format!(
                    "{} switches, {} hosts, {} links",
                    recorded.switches().len(),
                    recorded.hosts().len(),
                    recorded.links().len()
                ),
                why: why
                    .replace("first", "topology given")
                    .replace("second", "run's"),
            }),
        },
        (Some(given), None) => Ok(Some(given.clone())),
        (None, Some(recorded)) => Ok(Some(recorded)),
        (None, None) => Err(DiagnoseError::NoTopology { run: run.id }),
    }
}

/// The run's hop samples, path losses and port counters over its whole
/// span, and the
/// links its plan measures (the plan given, checked against the run's).
async fn evidence(
    req: &Request,
    store: &Store,
    run: Run,
    topo: &Topology,
) -> Result<Int, DiagnoseError> {
    let measured = match &req.plan {
        Some(plan) => {
            check_plan(plan, &run, topo)?;
            plan_links(topo, plan)
        }
        None => run
            .paths
            .iter()
            .flat_map(|(_, ls)| ls)
            .filter_map(|&l| run.links.get(l as usize).cloned())
            .collect(),
    };
    let (a, b) = run.span_ns.unwrap_or_default();
    let samples = samples::link_samples(store, run.id, a, b).await?;
    let losses = samples::path_loss(store, &run, a, b).await?;
    let counts = counters::link_counts(store, run.id, &run.links).await?;
    Ok(Int {
        run,
        measured,
        samples,
        losses,
        counts,
    })
}

/// The directed links a plan's paths cross.
pub fn plan_links(topo: &Topology, plan: &Plan) -> Vec<DirLink> {
    plan.paths
        .iter()
        .flat_map(|p| p.nodes.iter().zip(&p.egress_ports))
        .filter_map(|(n, &port)| DirLink::leaving(topo, n, port))
        .collect()
}

/// A plan given with a run must be the plan the run measured: the same
/// paths over the same links.
fn check_plan(plan: &Plan, run: &Run, topo: &Topology) -> Result<(), DiagnoseError> {
    let mismatch = |why: String| DiagnoseError::PlanMismatch {
        given: format!("{} paths, planned on {}", plan.paths.len(), plan.topology),
        run: run.id,
        why,
    };
    let recorded: HashMap<u16, Vec<&DirLink>> = run
        .paths
        .iter()
        .map(|(id, ls)| {
            (
                *id,
                ls.iter()
                    .filter_map(|&l| run.links.get(l as usize))
                    .collect(),
            )
        })
        .collect();
    if recorded.len() != plan.paths.len() {
        return Err(mismatch(format!(
            "it has {} paths, the run {}",
            plan.paths.len(),
            recorded.len()
        )));
    }
    for p in &plan.paths {
        let links: Vec<DirLink> = p
            .nodes
            .iter()
            .zip(&p.egress_ports)
            .filter_map(|(n, &port)| DirLink::leaving(topo, n, port))
            .collect();
        let same = recorded
            .get(&p.id)
            .is_some_and(|r| r.len() == links.len() && r.iter().zip(&links).all(|(a, b)| *a == b));
        if !same {
            return Err(mismatch(format!("its path {} crosses other links", p.id)));
        }
    }
    Ok(())
}
