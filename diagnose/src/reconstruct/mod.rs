//! Traces without instrumentation: which incoming request made each
//! outgoing call, from request/response timestamps and a call graph.
//!
//! Spans → [`model`] RPCs (client joined to server by their connection,
//! parent links unknown) → per-service [`view`] timelines → one of
//! [`tw`] (TraceWeaver: [`candidates`], [`batches`], [`scoring`],
//! [`mwis`]), [`wap5`] or [`fcfs`] → a [`Reconstruction`] that [`output`]
//! writes back as OTLP and [`accuracy`] scores. Where a service is not
//! instrumented its times come from the other side of each RPC, moved by
//! the INT one-way delays of [`int_bounds`].

pub mod accuracy;
pub mod batches;
pub mod callgraph;
pub mod candidates;
pub mod executors;
pub mod fcfs;
pub mod gather;
pub mod int_bounds;
mod int_legs;
pub mod model;
pub mod mwis;
pub mod output;
pub mod request;
pub mod scoring;
pub mod skips;
pub mod tw;
pub mod view;
pub mod wap5;

use callgraph::CallGraph;
use candidates::Shape;
use executors::Grain;
use model::Rpcs;
use view::{views, Transfer, View};

/// The reconstruction algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    /// TraceWeaver.
    Tw,
    /// WAP5's causal-delay linking.
    Wap5,
    /// First come, first served.
    Fcfs,
}

impl std::str::FromStr for Algo {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tw" => Ok(Algo::Tw),
            "wap5" => Ok(Algo::Wap5),
            "fcfs" => Ok(Algo::Fcfs),
            _ => Err(format!("unknown algorithm {s:?} (tw, wap5, fcfs)")),
        }
    }
}

/// Every call's inferred parent.
#[derive(Debug, Clone, Default)]
pub struct Reconstruction {
    /// Per RPC: the RPC whose request made it (`None`: a root, or no
    /// parent found).
    pub parent: Vec<Option<u32>>,
    /// Per RPC: confidence in its parent link, 0..=1.
    pub confidence: Vec<f64>,
    /// Per RPC that is a request at some service: its best mappings (the
    /// RPCs it called) with their probabilities (tw only).
    pub alternatives: Vec<Vec<(Vec<u32>, f64)>>,
    /// Per service: what bound its calls to its requests besides timing
    /// (tw only).
    pub bound_by: Vec<Option<Grain>>,
}

/// Infers the parent of every RPC with a caller.
pub fn reconstruct(
    rpcs: &Rpcs,
    cg: &CallGraph,
    transfer: &dyn Transfer,
    algo: Algo,
    rounds: usize,
) -> Reconstruction {
    let n = rpcs.rpcs.len();
    let mut out = Reconstruction {
        parent: vec![None; n],
        confidence: vec![0.0; n],
        alternatives: vec![Vec::new(); n],
        bound_by: vec![None; rpcs.services.len()],
    };
    // A service that gathers is solved last, once the others' links say
    // which of its requests are one request's parts ([`gather`]).
    let gathering = |v: &View| {
        let parts = cg.gathering.get(&rpcs.services[v.service as usize]);
        parts.copied().filter(|_| algo == Algo::Tw)
    };
    let (last, first): (Vec<View>, Vec<View>) = views(rpcs, transfer)
        .into_iter()
        .partition(|v| gathering(v).is_some());
    for view in &first {
        solve(view, rpcs, cg, algo, rounds, &mut out);
    }
    if !last.is_empty() {
        let roots = gather::roots(rpcs, &out.parent);
        for mut view in last {
            if let Some(parts) = gathering(&view) {
                gather::mark(&mut view, &roots, parts);
            }
            solve(&view, rpcs, cg, algo, rounds, &mut out);
        }
    }
    out
}

/// Links the calls of one service's `view` to its requests, into `out`.
fn solve(
    view: &View,
    rpcs: &Rpcs,
    cg: &CallGraph,
    algo: Algo,
    rounds: usize,
    out: &mut Reconstruction,
) {
    let links = match algo {
        Algo::Tw => {
            out.bound_by[view.service as usize] = view.bound_by;
            let shapes = Shape::of(cg, &rpcs.services[view.service as usize], &rpcs.services);
            let shapes = skips::allow(view, shapes, &rpcs.services);
            let solved = tw::weave(view, shapes, rounds);
            for (x, alts) in view.ins.iter().zip(solved.alternatives) {
                out.alternatives[x.rpc as usize] = alts
                    .into_iter()
                    .map(|(calls, p)| (calls.iter().map(|&c| view.outs[c].rpc).collect(), p))
                    .collect();
            }
            solved.parent
        }
        Algo::Wap5 => wap5::link(view),
        Algo::Fcfs => fcfs::link(view),
    };
    for (o, link) in view.outs.iter().zip(links) {
        if let Some((i, conf)) = link {
            out.parent[o.rpc as usize] = Some(view.ins[i].rpc);
            out.confidence[o.rpc as usize] = conf;
        }
    }
}
