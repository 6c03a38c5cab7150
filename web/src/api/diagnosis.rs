//! `GET /api/diagnosis`: the run's diagnosis (`intpath_diagnose::load` and
//! `analyze`, the same as `intpath diagnose culprits --db`): its culprits
//! with their evidence and, for each, the slow requests it explains with
//! their critical paths. A database without spans, or a run its spans do
//! not reach, is an answer (`available: false` and why), not an error.
//!
//! A diagnosis takes seconds on a large run, so one is computed at a time
//! and kept until the run has new probes, and for at least
//! [`REUSE_FOR`] while they keep arriving.

use super::ApiError;
use crate::state::{AppState, CachedDiagnosis};
use axum::extract::{Query, State};
use axum::Json;
use intpath_diagnose::attribution::{Attribution, Verdict};
use intpath_diagnose::critical::{self, TraceBlame};
use intpath_diagnose::culprits::{Culprit, CulpritKind, Method};
use intpath_diagnose::rpc::{Callee, Unjoined};
use intpath_diagnose::{report, Diagnosis, Options, Request, SpanWindow};
use intpath_store::{query, RunId};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a diagnosis of a run that is still growing is shown before it
/// is computed again.
pub const REUSE_FOR: Duration = Duration::from_secs(15);

/// Slow requests listed per culprit, most affected first.
pub const TRACES_PER_CULPRIT: usize = 20;

#[derive(Debug, Clone, Deserialize)]
pub struct DiagnosisParams {
    /// The run whose spans and INT to diagnose (default: the newest run
    /// with probes).
    pub run: Option<RunId>,
}

pub async fn get(
    State(app): State<Arc<AppState>>,
    Query(p): Query<DiagnosisParams>,
) -> Result<Json<Value>, ApiError> {
    let probes = match app.store().await {
        Ok(store) => {
            let runs = query::runs(&store).await?;
            let run = p.run.or(runs.last().map(|r| r.run));
            runs.iter()
                .find(|r| Some(r.run) == run)
                .map_or(0, |r| r.probes)
        }
        Err(ApiError::NotYet(why)) => return Ok(Json(unavailable(&why))),
        Err(e) => return Err(e),
    };
    let mut cache = app.diagnosis.lock().await;
    if let Some(c) = cache.as_ref() {
        if c.run == p.run && (c.probes == probes || c.at.elapsed() < REUSE_FOR) {
            return Ok(Json(c.answer.clone()));
        }
    }
    let req = Request {
        window: p.run.map_or(SpanWindow::LatestRun, SpanWindow::Run),
        ..Request::of_db(app.config.db.clone())
    };
    let started = Instant::now();
    let answer = match intpath_diagnose::load(&req).await {
        Ok(inputs) => tokio::task::spawn_blocking(move || {
            match intpath_diagnose::analyze(&inputs, &Options::default()) {
                Ok(d) => answer(&d),
                Err(e) => unavailable(&e.to_string()),
            }
        })
        .await
        .map_err(|e| ApiError::Internal(format!("the diagnosis failed: {e}")))?,
        Err(e) => unavailable(&e.to_string()),
    };
    tracing::info!(
        "diagnosis of run {:?} in {:.2} s",
        p.run,
        started.elapsed().as_secs_f64()
    );
    *cache = Some(CachedDiagnosis {
        run: p.run,
        probes,
        at: Instant::now(),
        answer: answer.clone(),
    });
    Ok(Json(answer))
}

fn unavailable(why: &str) -> Value {
    json!({ "available": false, "why": why })
}

/// `intpath diagnose culprits --format json`'s answer, each culprit with
/// the requests it slowed.
fn answer(d: &Diagnosis) -> Value {
    let culprits = d.culprits(Method::Diagnose);
    let blames = critical::critical_paths(&d.edges, &d.attr);
    let text = report::culprits_json(d, &culprits, &d.tested());
    let mut v: Value = serde_json::from_str(&text).unwrap_or_default();
    for (i, c) in culprits.iter().enumerate() {
        v["culprits"][i]["traces"] = explained(d, c, &blames);
    }
    v["available"] = json!(true);
    v["spans"] = json!(d.spans);
    v["traces"] = json!(d.traces.len());
    v["slow_traces"] = json!(blames.iter().filter(|t| t.verdict != Verdict::Ok).count());
    v
}

/// Of edge `i`, the excess (ns) that culprit `c` accounts for: a service's
/// own slowness, a link's queueing or loss on the edge's path, a host's or
/// a host pair's residual, what its calls to a callee without spans added.
fn share(d: &Diagnosis, c: &Culprit, i: usize) -> f64 {
    let (e, a): (_, &Attribution) = (&d.edges[i], &d.attr[i]);
    if !a.slow {
        return 0.0;
    }
    let host = |h: u16| d.hosts[h as usize].as_str();
    // A call the culprit service left unanswered is below this edge: its
    // wait is what this edge waited on.
    let silent_to = |u: &Unjoined| match u.callee {
        Callee::Silent { service, .. } => d.services[service as usize] == c.name,
        _ => false,
    };
    if c.kind == CulpritKind::Service && e.unjoined.iter().any(silent_to) {
        return a.downstream;
    }
    let touches = match c.kind {
        CulpritKind::Service => d.services[e.callee as usize] == c.name,
        CulpritKind::Dependency => (e.unjoined.iter().filter_map(|u| u.callee.dependency()))
            .any(|k| d.dependencies.get(k as usize) == Some(&c.name)),
        CulpritKind::Link | CulpritKind::Loss => d.paths[i]
            .as_ref()
            .is_some_and(|p| p.all().any(|l| d.index.name(l) == c.name)),
        CulpritKind::Host => host(e.client_host) == c.name || host(e.server_host) == c.name,
        CulpritKind::Network => {
            let (x, y) = (host(e.client_host), host(e.server_host));
            [format!("{x} <-> {y}"), format!("{y} <-> {x}")].contains(&c.name)
        }
    };
    match (touches, c.kind) {
        (false, _) => 0.0,
        (true, CulpritKind::Service) => a.service,
        (true, CulpritKind::Dependency) => a.dependency,
        (true, CulpritKind::Link) => a.fabric,
        (true, CulpritKind::Loss) => a.loss,
        (true, CulpritKind::Host) => a.host,
        (true, CulpritKind::Network) => a.host + a.fabric,
    }
}

/// The slow requests `c` explains, most affected first: those with a slow
/// call it accounts for, with their critical path and those calls (a call
/// off the critical path ran beside a longer one and held nothing up; it is
/// listed, and counted apart).
fn explained(d: &Diagnosis, c: &Culprit, blames: &[TraceBlame]) -> Value {
    let mut by_trace: BTreeMap<u32, Vec<(usize, f64)>> = BTreeMap::new();
    for i in 0..d.edges.len() {
        let ns = share(d, c, i);
        if ns > 0.0 {
            by_trace.entry(d.edges[i].trace).or_default().push((i, ns));
        }
    }
    let blame_of: HashMap<u32, &TraceBlame> = blames.iter().map(|t| (t.trace, t)).collect();
    // (ms on the critical path, ms in all, trace, its calls and their ms)
    type Hit = (f64, f64, u32, Vec<(usize, f64)>);
    let mut hit: Vec<Hit> = by_trace
        .into_iter()
        .map(|(trace, calls)| {
            let on_path = |i: usize| {
                blame_of
                    .get(&trace)
                    .is_some_and(|t| t.path.contains(&(i as u32)))
            };
            let total: f64 = calls.iter().map(|c| c.1).sum();
            let critical: f64 = calls.iter().filter(|c| on_path(c.0)).map(|c| c.1).sum();
            (critical, total, trace, calls)
        })
        .collect();
    hit.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let on_critical = hit.iter().filter(|h| h.0 > 0.0).count();
    let worst: Vec<Value> = hit
        .iter()
        .take(TRACES_PER_CULPRIT)
        .map(|(critical, total, trace, calls)| {
            let t = blame_of.get(trace);
            let path: Vec<Value> = t
                .map(|t| {
                    t.path
                        .iter()
                        .map(|&i| report::edge_json(d, i as usize))
                        .collect()
                })
                .unwrap_or_default();
            let calls: Vec<Value> = calls
                .iter()
                .map(|&(i, ns)| {
                    let mut v = report::edge_json(d, i);
                    v["explained_ms"] = json!(ms(ns));
                    v["on_critical_path"] = json!(t.is_some_and(|t| t.path.contains(&(i as u32))));
                    v
                })
                .collect();
            json!({
                "trace": d.traces[*trace as usize],
                "span_ms": t.map(|t| ms(t.span_ns as f64)),
                "blame": t.map(|t| t.verdict.name()),
                "excess_ms": t.map(|t| ms(t.excess_ns)),
                "explained_ms": ms(*total),
                "explained_on_critical_path_ms": ms(*critical),
                "critical_path": path,
                "calls": calls,
            })
        })
        .collect();
    json!({ "count": hit.len(), "on_critical_path": on_critical, "worst": worst })
}

fn ms(ns: f64) -> f64 {
    (ns / 1e3).round() / 1e3
}
