//! Calls a traced service never answered, or took up only after its caller
//! had given up: evidence of their own kind. A healthy service answers
//! every call, so unanswered calls that gather on one callee far beyond
//! its share of the calls are concentrated on it, however few and
//! whenever they came (a block test needs them bunched in time and
//! numerous).

use super::stats::poisson_at_least;
use super::Inputs;
use crate::rpc::{longest_answer, Callee, Unjoined};

/// One service's unanswered calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Silence {
    pub calls: u64,
    /// Their callers' waits beyond what the service's answered calls took
    /// ([`longest_answer`]), summed (ns): what the silence cost over an
    /// answer. Spans merely lost on export were answered in the usual time
    /// and add nearly nothing.
    pub excess_ns: f64,
    /// The Poisson probability of at least this many unanswered calls at
    /// the rate the other services' calls went unanswered (at least one in
    /// all the run's calls).
    pub p: f64,
}

/// Per service of [`Inputs::services`].
pub(super) fn of(inp: &Inputs<'_>) -> Vec<Silence> {
    let n = inp.services.len();
    let mut answered: Vec<Vec<i64>> = vec![Vec::new(); n];
    let mut waits: Vec<Vec<i64>> = vec![Vec::new(); n];
    let mut silent = |call: &Unjoined| {
        if let Callee::Silent { service: s, .. } = call.callee {
            waits[s as usize].push(call.cr - call.cs);
        }
    };
    for e in inp.edges {
        answered[e.callee as usize].push(e.total());
        e.unjoined.iter().for_each(&mut silent);
    }
    inp.entry_calls.iter().for_each(&mut silent);
    let all_calls: usize = answered.iter().chain(&waits).map(Vec::len).sum();
    let all_silent: usize = waits.iter().map(Vec::len).sum();
    let mut out = vec![Silence::default(); n];
    for (s, (mut ok, w)) in answered.into_iter().zip(waits).enumerate() {
        if w.is_empty() {
            continue;
        }
        let calls = ok.len() + w.len();
        let others = (all_silent - w.len()) as f64 / (all_calls - calls).max(1) as f64;
        let rate = others.max(1.0 / all_calls as f64);
        let usual = match ok.is_empty() {
            true => 0,
            false => longest_answer(&mut ok),
        };
        out[s] = Silence {
            calls: w.len() as u64,
            excess_ns: w.iter().map(|&x| (x - usual).max(0) as f64).sum(),
            p: poisson_at_least(w.len() as u64, calls as f64 * rate),
        };
    }
    out
}
