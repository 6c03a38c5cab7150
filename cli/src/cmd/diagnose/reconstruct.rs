//! `intpath diagnose reconstruct`: parent links inferred from timestamps.

use anyhow::{Context, Result};
use intpath_core::topo::Topology;
use intpath_diagnose::reconstruct::callgraph::CallGraph;
use intpath_diagnose::reconstruct::request::{
    self as reconstruct, read_spans, service_confidence, Graph, Method, Request, Telemetry,
};
use intpath_store::Db;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Spans whose server spans name their client spans (connection
    /// pairing) and whose client spans have no parents.
    #[arg(long)]
    traces: PathBuf,
    /// Call graph JSON ({"services": {name: [{stages, share, caller?, arrival?}]}, "gathering"?: {name: visits}}), as --save-call-graph writes it.
    #[arg(long, conflicts_with = "train", required_unless_present = "train")]
    call_graph: Option<PathBuf>,
    /// Instrumented spans to learn the call graph from.
    #[arg(long)]
    train: Option<PathBuf>,
    /// tw (TraceWeaver), tw-int (TraceWeaver with INT bounds), wap5, fcfs.
    #[arg(long, default_value = "tw")]
    algo: Method,
    /// Treat SERVICE as uninstrumented: its spans are dropped and its
    /// times come from its peers' (needs --db, whose run gives the INT).
    #[arg(long = "blackbox", value_name = "SERVICE")]
    blackbox: Vec<String>,
    /// The input is instrumented: ignore its parent links, then score the
    /// reconstruction against them.
    #[arg(long)]
    strip_parents: bool,
    /// The collector's telemetry database (for --blackbox): a SQLite file
    /// or a postgres:// URL.
    #[arg(long)]
    db: Option<Db>,
    /// Topology file or generator (for --blackbox; default: the run's own).
    #[arg(long)]
    topo: Option<String>,
    /// Refinement rounds of tw at the least; more while a round still
    /// moves calls, up to 8.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Decide from timing alone, even where spans record the process and
    /// thread that ran them (service.instance.id, thread.id) and a
    /// service's spans show its calls stay on the thread that took the
    /// request.
    #[arg(long)]
    timing_only: bool,
    /// Where to write the reconstructed OTLP JSON (default: stdout).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write the call graph used (given or learned) here.
    #[arg(long)]
    save_call_graph: Option<PathBuf>,
}

pub fn run(r: Args) -> Result<()> {
    let graph = match (&r.call_graph, &r.train) {
        (Some(p), _) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("{}: cannot read", p.display()))?;
            Graph::Given(CallGraph::from_json(&text).with_context(|| p.display().to_string())?)
        }
        (None, Some(t)) => Graph::Train(read_spans(t)?),
        (None, None) => anyhow::bail!("pass --call-graph or --train"),
    };
    let telemetry = match &r.db {
        Some(db) => {
            let topo = r.topo.as_deref().map(Topology::load).transpose()?;
            let req = intpath_diagnose::Request {
                db: Some(db.clone()),
                topo,
                ..intpath_diagnose::Request::of_traces(r.traces.clone())
            };
            let diagnosis = intpath_diagnose::run(&req, &intpath_diagnose::Options::default())?;
            Some(Telemetry { diagnosis })
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let spans = read_spans(&r.traces)?;
    let out = reconstruct::run(Request {
        spans,
        graph,
        method: r.algo,
        blackbox: r.blackbox,
        strip_parents: r.strip_parents,
        telemetry,
        rounds: r.rounds,
        threads: !r.timing_only,
    })?;
    if let Some(p) = &r.save_call_graph {
        crate::cmd::emit(Some(p), &out.graph.to_json())?;
    }
    crate::cmd::emit(r.out.as_deref(), &out.document.to_string())?;
    eprintln!(
        "{} RPCs reconstructed in {:.2} s",
        out.rpcs.rpcs.len(),
        started.elapsed().as_secs_f64()
    );
    eprintln!(
        "{:<20} {:>7} {:>10}  calls bound to requests by",
        "service", "calls", "confidence"
    );
    for (service, calls, conf) in service_confidence(&out.rpcs, &out.rec) {
        let bound = (out.rpcs.service_id(&service))
            .and_then(|id| out.rec.bound_by.get(id as usize).copied().flatten())
            .map_or("timing".to_owned(), |g| format!("{g} and timing"));
        eprintln!("{service:<20} {calls:>7} {conf:>10.3}  {bound}");
    }
    if let Some(s) = &out.score {
        eprintln!(
            "against the input's links: end-to-end {:.1} % of {} traces, links {:.1} %",
            100.0 * s.end_to_end,
            s.traces,
            100.0 * s.links
        );
        for (by, scores) in [("made by", &s.per_service), ("into", &s.per_callee)] {
            for p in scores {
                eprintln!(
                    "  calls {by:<8} {:<20} {:>5.1} % of {}",
                    p.service,
                    100.0 * p.accuracy,
                    p.calls
                );
            }
        }
    }
    Ok(())
}
