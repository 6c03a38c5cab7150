//! Culprits: the services, links, hosts and pairs of hosts whose evidence
//! changed beyond the run's own variation, each with the time it added per
//! request and a q-value; none when nothing did.
//!
//! Every candidate's evidence ([`candidates`]) is laid on one timeline
//! ([`timeline`]); what slows every candidate at once (a loaded machine) is
//! divided out; each candidate is then tested against its own quietest
//! windows by block permutation ([`change`]), the p-values adjusted for the
//! number of candidates (Benjamini–Hochberg), and a candidate is a culprit
//! when it passes at the false discovery rate and added a share of the
//! requests' time worth naming ([`decide`]); links are also compared with
//! the fabric's other links ([`levels`]), and a culprit another one explains
//! is dropped ([`explain`]). Given a healthy period (`--baseline`), services
//! and stores are also compared with their calls there ([`healthy`]), which
//! finds a fault present for the whole run. Noise, however heavy, is
//! spread over the run and over every candidate; a fault is concentrated
//! on one of them and in time. `hottest` and `vote` are the baselines of
//! one signal alone; they rank without testing.

mod candidates;
mod change;
mod decide;
mod effect;
mod explain;
mod healthy;
mod held;
mod kind;
mod levels;
mod load_factor;
mod permutation;
pub(crate) mod requests;
mod silence;
mod stats;
mod timeline;

pub use kind::CulpritKind;

use crate::attribution::Attribution;
use crate::evidence::Evidence;
use crate::path::{HostPath, LinkIndex};
use crate::rpc::Edge;
use intpath_core::link::{DirLink, LinkName};
use intpath_core::topo::Topology;
use serde_json::json;

/// One culprit and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Culprit {
    /// A link is listed once: `link` when its queueing added more time,
    /// `loss` when its loss did.
    pub kind: CulpritKind,
    pub name: String,
    /// What ranks it: for `diagnose`, the milliseconds it added per
    /// request; for the baselines, their own measure.
    pub score: f64,
    /// The Benjamini–Hochberg adjusted p-value of its test (`diagnose`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q_value: Option<f64>,
    /// Milliseconds it added per request of the run (`diagnose`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect_ms: Option<f64>,
    pub evidence: serde_json::Value,
}

/// Which ranking to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Traces and INT together (ours).
    Diagnose,
    /// INT alone: the links with the highest mean queueing delay.
    Hottest,
    /// Traces alone: each slow edge votes for the links of its path.
    Vote,
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "diagnose" => Ok(Method::Diagnose),
            "hottest" => Ok(Method::Hottest),
            "vote" => Ok(Method::Vote),
            _ => Err(format!("unknown method {s:?} (diagnose, hottest, vote)")),
        }
    }
}

/// What the ranking reads.
pub struct Inputs<'a> {
    pub edges: &'a [Edge],
    pub paths: &'a [Option<HostPath>],
    pub attr: &'a [Attribution],
    pub index: &'a LinkIndex,
    pub services: &'a [String],
    /// Callees that record no spans, by the name their callers give them.
    pub dependencies: &'a [String],
    /// The requests' entry server spans: their services' own work.
    pub entries: &'a [crate::rpc::Entry],
    /// Dependencies' calls made under those.
    pub entry_calls: &'a [crate::rpc::Unjoined],
    pub hosts: &'a [String],
    /// The run's INT evidence; `None` for a diagnosis from traces alone.
    pub evidence: Option<&'a Evidence>,
    /// Mean queueing delay per link over the run (ns), for `hottest`.
    pub link_heat: &'a [f64],
    /// Probe loss fraction per link over the run (the least lossy probe
    /// path crossing it); a loss is only blamed on links probes saw lose.
    pub link_loss: &'a [f64],
    /// A healthy period's calls, from its traces alone, to compare the
    /// services' and stores' calls with ([`healthy`]).
    pub baseline: Option<Box<Inputs<'a>>>,
}

#[cfg(test)]
impl<'a> Inputs<'a> {
    /// Calls over `index`'s fabric and nothing else: no paths, names,
    /// entries, INT or baseline, for tests that set what they look at.
    pub(crate) fn of_calls(
        edges: &'a [Edge],
        attr: &'a [Attribution],
        index: &'a LinkIndex,
    ) -> Self {
        Inputs {
            edges,
            paths: &[],
            attr,
            index,
            services: &[],
            dependencies: &[],
            entries: &[],
            entry_calls: &[],
            hosts: &[],
            evidence: None,
            link_heat: &[],
            link_loss: &[],
            baseline: None,
        }
    }
}

/// What the `diagnose` method found: the culprits, best first (an empty
/// list means nothing stood out of the run's own variation), and every
/// candidate it tested, culprit or not, the most significant first (what
/// a user reads to see how close the others came).
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    pub named: Vec<Culprit>,
    pub tested: Vec<Culprit>,
}

/// Tests every candidate of `inp`: the `diagnose` method.
pub fn assess(inp: &Inputs<'_>) -> Assessment {
    let (mut named, mut tested) = decide::assess(inp);
    by_score(&mut named);
    tested.sort_by(|a, b| {
        let q = |c: &Culprit| c.q_value.unwrap_or(1.0);
        q(a).total_cmp(&q(b))
            .then_with(|| b.score.total_cmp(&a.score))
    });
    Assessment { named, tested }
}

/// Culprits best first: for `diagnose` only those that passed their test;
/// for a baseline, its ranking.
pub fn rank(inp: &Inputs<'_>, method: Method) -> Vec<Culprit> {
    let mut out = match method {
        Method::Diagnose => return assess(inp).named,
        Method::Hottest => hottest(inp),
        Method::Vote => vote(inp),
    };
    by_score(&mut out);
    out
}

fn by_score(out: &mut [Culprit]) {
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.name.cmp(&b.name))
    });
}

/// The links a heatmap outlines: link and loss culprits among the first
/// `top` of `ranking` with a positive score, resolved on `topo`.
pub fn blamed_links(ranking: &[Culprit], topo: &Topology, top: usize) -> Vec<DirLink> {
    ranking
        .iter()
        .take(top)
        .filter(|c| c.kind.is_link() && c.score > 0.0)
        .filter_map(|c| LinkName::parse(&c.name).and_then(|n| n.resolve(topo)))
        .collect()
}

fn ms(ns: f64) -> f64 {
    (ns / 1e4).round() / 100.0
}

/// Splits each observation's amount among its candidates in proportion to
/// their rates (observations blaming a candidate per edge that could have
/// hit it), re-estimating the rates from the split until they settle: the
/// expectation–maximisation of loss tomography. A candidate every
/// observation shares and few clean edges cross ends up with nearly all of
/// it; one that is only sometimes on the way keeps the little its rate
/// earns. `exposure[c]`: edges that could have hit candidate `c`. Returns,
/// per observation, each of its candidates' part of its amount.
fn split_by_rate_each(obs: &[(f64, Vec<u32>)], exposure: &[u64]) -> Vec<Vec<f64>> {
    let n = exposure.len();
    let mut rate = vec![0.0f64; n];
    for (_, cand) in obs {
        for &c in cand {
            rate[c as usize] += 1.0;
        }
    }
    let norm = |count: &mut [f64]| {
        for (r, &x) in count.iter_mut().zip(exposure) {
            *r /= x.max(1) as f64;
        }
    };
    norm(&mut rate);
    for _ in 0..29 {
        let mut count = vec![0.0; n];
        for (_, cand) in obs {
            let sum: f64 = cand.iter().map(|&c| rate[c as usize]).sum();
            if sum <= 0.0 {
                continue;
            }
            for &c in cand {
                count[c as usize] += rate[c as usize] / sum;
            }
        }
        norm(&mut count);
        rate = count;
    }
    obs.iter()
        .map(|(amount, cand)| {
            let sum: f64 = cand.iter().map(|&c| rate[c as usize]).sum();
            cand.iter()
                .map(|&c| match sum > 0.0 {
                    true => amount * rate[c as usize] / sum,
                    false => 0.0,
                })
                .collect()
        })
        .collect()
}

/// The measured links that queued at all, by mean queueing delay: an idle
/// link is no culprit, not even the last of a baseline's.
fn hottest(inp: &Inputs<'_>) -> Vec<Culprit> {
    (0..inp.index.links.len())
        .filter(|&l| inp.index.measured[l] && inp.link_heat[l] > 0.0)
        .map(|l| Culprit {
            kind: CulpritKind::Link,
            name: inp.index.name(l as u32),
            score: inp.link_heat[l] / 1e3,
            q_value: None,
            effect_ms: None,
            evidence: json!({ "mean_queue_us": (inp.link_heat[l] / 1e3).round() }),
        })
        .collect()
}

fn vote(inp: &Inputs<'_>) -> Vec<Culprit> {
    let mut votes = vec![0.0; inp.index.links.len()];
    for (p, a) in inp.paths.iter().zip(inp.attr) {
        let Some(p) = p.as_ref().filter(|_| a.slow) else {
            continue;
        };
        let n = (p.forward.len() + p.reverse.len()).max(1) as f64;
        for l in p.all() {
            votes[l as usize] += 1.0 / n;
        }
    }
    votes
        .iter()
        .enumerate()
        .filter(|(_, &v)| v > 0.0)
        .map(|(l, &v)| Culprit {
            kind: CulpritKind::Link,
            name: inp.index.name(l as u32),
            score: v,
            q_value: None,
            effect_ms: None,
            evidence: json!({ "votes": v }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every link measured, one of them queueing: the `hottest`
    /// baseline names that one alone, and `vote` without slow edges none.
    #[test]
    fn idle_links_are_no_baseline_culprits() {
        let topo = Topology::load("leafspine:spines=1,leaves=2,hosts=1").unwrap();
        let mut index = LinkIndex::new(&topo);
        let all = index.links.clone();
        index.mark_measured(&all);
        let mut heat = vec![0.0; all.len()];
        heat[1] = 2_500.0;
        let loss = vec![0.0; all.len()];
        let inp = Inputs {
            link_heat: &heat,
            link_loss: &loss,
            ..Inputs::of_calls(&[], &[], &index)
        };
        let hot = rank(&inp, Method::Hottest);
        assert_eq!(hot.len(), 1, "{hot:?}");
        assert_eq!(hot[0].name, all[1].to_string());
        assert_eq!(hot[0].score, 2.5);
        assert!(rank(&inp, Method::Vote).is_empty());
    }
}
