//! `intpath diagnose reconstruct` as a library call: typed options in,
//! reconstructed traces, per-service confidence and (for instrumented
//! inputs) the score out.

use super::accuracy::{score, Score};
use super::callgraph::{CallGraph, CallGraphError};
use super::int_bounds::{bounds, Bounds, Mode};
use super::model::Rpcs;
use super::view::{NoTransfer, Transfer};
use super::{output, reconstruct, Algo, Reconstruction};
use crate::spans::{self, Span};
use crate::Diagnosis;
use serde_json::Value;
use std::path::PathBuf;

/// The methods the CLI offers: an algorithm, and for `tw-int` the INT
/// bounds on hidden services' times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Tw,
    TwInt,
    Wap5,
    Fcfs,
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tw-int" => Ok(Method::TwInt),
            other => Ok(
                match other
                    .parse::<Algo>()
                    .map_err(|_| format!("unknown algorithm {s:?} (tw, tw-int, wap5, fcfs)"))?
                {
                    Algo::Tw => Method::Tw,
                    Algo::Wap5 => Method::Wap5,
                    Algo::Fcfs => Method::Fcfs,
                },
            ),
        }
    }
}

impl Method {
    pub fn algo(self) -> Algo {
        match self {
            Method::Tw | Method::TwInt => Algo::Tw,
            Method::Wap5 => Algo::Wap5,
            Method::Fcfs => Algo::Fcfs,
        }
    }
}

/// Where the call graph comes from.
#[derive(Debug, Clone)]
pub enum Graph {
    Given(CallGraph),
    /// Learned from these instrumented spans.
    Train(Vec<Span>),
}

/// INT telemetry for the hidden services' bounds: the diagnosis of the
/// instrumented spans with their INT evidence.
pub struct Telemetry {
    pub diagnosis: Diagnosis,
}

pub struct Request {
    pub spans: Vec<Span>,
    pub graph: Graph,
    pub method: Method,
    /// Services to treat as uninstrumented (their spans are dropped).
    pub blackbox: Vec<String>,
    /// The input carries its parent links: ignore them and score against them.
    pub strip_parents: bool,
    /// Needed when `blackbox` is not empty.
    pub telemetry: Option<Telemetry>,
    /// Refinement rounds of tw at the least ([`super::tw::weave`]).
    pub rounds: usize,
    /// Let the thread and process each span ran on constrain tw's
    /// candidates where a service's spans bear them out; `false`: timing
    /// alone.
    pub threads: bool,
}

pub struct Outcome {
    pub rpcs: Rpcs,
    pub rec: Reconstruction,
    pub graph: CallGraph,
    pub document: Value,
    pub score: Option<Score>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReconstructError {
    #[error(transparent)]
    CallGraph(#[from] CallGraphError),
    #[error("the input already links {0} client spans to parents; pass --strip-parents to re-infer and score them")]
    HasParents(usize),
    #[error("--blackbox {0}: no such service in the traces")]
    UnknownService(String),
    #[error("--blackbox needs INT telemetry (--db) to bound the hidden service's times")]
    NoTelemetry,
    #[error("{0}: {1}")]
    Read(PathBuf, String),
}

/// Reads a span file (any supported format).
pub fn read_spans(path: &std::path::Path) -> Result<Vec<Span>, ReconstructError> {
    let err = |e: String| ReconstructError::Read(path.to_owned(), e);
    let text = spans::read_file(path).map_err(|e| err(e.to_string()))?;
    Ok(spans::parse(&text, None)
        .map_err(|e| err(e.to_string()))?
        .spans)
}

pub fn run(req: Request) -> Result<Outcome, ReconstructError> {
    let graph = match req.graph {
        Graph::Given(g) => g,
        Graph::Train(spans) => CallGraph::learn(&Rpcs::join(&spans))?,
    };
    let mut rpcs = Rpcs::join(&req.spans);
    let linked = rpcs.rpcs.iter().filter(|r| r.truth.is_some()).count();
    if linked > 0 && !req.strip_parents {
        return Err(ReconstructError::HasParents(linked));
    }
    if !req.threads {
        rpcs.forget_executors();
    }
    for name in &req.blackbox {
        let id = rpcs
            .service_id(name)
            .ok_or_else(|| ReconstructError::UnknownService(name.clone()))?;
        rpcs.hide(id);
    }
    let transfer: Box<dyn Transfer> = if req.blackbox.is_empty() {
        Box::new(NoTransfer)
    } else {
        let t = req.telemetry.ok_or(ReconstructError::NoTelemetry)?;
        let mode = if req.method == Method::TwInt {
            Mode::Int
        } else {
            Mode::Symmetric
        };
        let b: Bounds = bounds(&req.spans, &rpcs, &t.diagnosis, &req.blackbox, mode);
        Box::new(b)
    };
    let rec = reconstruct(
        &rpcs,
        &graph,
        transfer.as_ref(),
        req.method.algo(),
        req.rounds,
    );
    let document = output::document(&req.spans, &rpcs, &rec);
    let score = req.strip_parents.then(|| score(&rpcs, &rec));
    Ok(Outcome {
        rpcs,
        rec,
        graph,
        document,
        score,
    })
}

/// Per calling service: calls and mean confidence of their parent links.
pub fn service_confidence(rpcs: &Rpcs, rec: &Reconstruction) -> Vec<(String, usize, f64)> {
    let mut per = vec![(0usize, 0.0); rpcs.services.len()];
    for (i, r) in rpcs.rpcs.iter().enumerate() {
        if let Some(c) = r.caller {
            per[c as usize].0 += 1;
            per[c as usize].1 += rec.confidence[i];
        }
    }
    per.into_iter()
        .enumerate()
        .filter(|(_, p)| p.0 > 0)
        .map(|(i, (n, c))| (rpcs.services[i].clone(), n, c / n as f64))
        .collect()
}
