//! Culprits: links, services and hosts ranked by the excess they explain on
//! slow requests. A link must also pass a YTrace-style quasi-experimental
//! test: requests that cross it must be slow more often than those that do
//! not (one-sided Fisher exact test, Benjamini–Hochberg across links), so a
//! hot link that hurts no request never outranks the one that does.

use crate::attribution::{Attribution, Verdict};
use crate::path::{HostPath, LinkIndex};
use crate::rpc::Edge;
use crate::stats::{benjamini_hochberg, fisher_greater, LnFactorial};
use intpath_core::link::{DirLink, LinkName};
use intpath_core::topo::Topology;
use serde_json::json;

/// False discovery rate a link's test must pass.
const FDR: f64 = 0.05;
/// Score kept by a link whose crossing requests are not more often slow.
const UNTESTED_WEIGHT: f64 = 0.01;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Culprit {
    /// `link`, `loss`, `service` or `host`, as in `truth.json`.
    pub kind: &'static str,
    pub name: String,
    pub score: f64,
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
    pub paths: &'a [Option<&'a HostPath>],
    pub attr: &'a [Attribution],
    pub index: &'a LinkIndex,
    pub services: &'a [String],
    pub hosts: &'a [String],
    /// Mean queueing delay per link over the run (ns), for `hottest` and
    /// for labelling hot links.
    pub link_heat: &'a [f64],
    /// Probe loss fraction per link over the run (the least lossy probe
    /// path crossing it); a loss is only blamed on links probes saw lose.
    pub link_loss: &'a [f64],
}

/// Candidates best first.
pub fn rank(inp: &Inputs<'_>, method: Method) -> Vec<Culprit> {
    let mut out = match method {
        Method::Diagnose => diagnose(inp),
        Method::Hottest => hottest(inp),
        Method::Vote => vote(inp),
    };
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The links a heatmap outlines: link and loss culprits among the first
/// `top` of `ranking` with a positive score, resolved on `topo`.
pub fn blamed_links(ranking: &[Culprit], topo: &Topology, top: usize) -> Vec<DirLink> {
    ranking
        .iter()
        .take(top)
        .filter(|c| matches!(c.kind, "link" | "loss") && c.score > 0.0)
        .filter_map(|c| LinkName::parse(&c.name).and_then(|n| n.resolve(topo)))
        .collect()
}

fn ms(ns: f64) -> f64 {
    (ns / 1e4).round() / 100.0
}

fn diagnose(inp: &Inputs<'_>) -> Vec<Culprit> {
    let n_links = inp.index.links.len();
    let mut queue = vec![0.0; n_links];
    let (mut slow_cross, mut all_cross) = (vec![0u64; n_links], vec![0u64; n_links]);
    let mut service = vec![0.0; inp.services.len()];
    // Calls to each service, and those slow on the service's own account.
    let (mut calls, mut blamed_calls) = (
        vec![0u64; inp.services.len()],
        vec![0u64; inp.services.len()],
    );
    let mut slow_total = 0u64;
    let mut seen = vec![u32::MAX; n_links];
    let mut host_touch = vec![0u64; inp.hosts.len()];
    // Losses and host residuals each have several candidates (every lossy
    // link of the path, both ends of the edge); they are split below.
    let (mut loss_obs, mut host_obs) = (Vec::new(), Vec::new());
    for (i, (e, a)) in inp.edges.iter().zip(inp.attr).enumerate() {
        slow_total += u64::from(a.slow);
        calls[e.callee as usize] += 1;
        host_touch[e.client_host as usize] += 1;
        if e.server_host != e.client_host {
            host_touch[e.server_host as usize] += 1;
        }
        if let Some(p) = inp.paths[i] {
            for l in p.all() {
                // A link on both legs counts once per edge.
                if seen[l as usize] != i as u32 {
                    seen[l as usize] = i as u32;
                    all_cross[l as usize] += 1;
                    slow_cross[l as usize] += u64::from(a.slow);
                }
            }
        }
        match a.verdict() {
            Verdict::Network => {
                if let Some(l) = a.hot_link {
                    queue[l as usize] += a.fabric;
                }
            }
            Verdict::Loss => {
                let leg: Vec<u32> = match (inp.paths[i], a.loss_forward) {
                    (Some(p), Some(true)) => p.forward.clone(),
                    (Some(p), Some(false)) => p.reverse.clone(),
                    (Some(p), None) => p.all().collect(),
                    (None, _) => Vec::new(),
                };
                let mut cand: Vec<u32> = leg
                    .into_iter()
                    .filter(|&l| inp.link_loss[l as usize] > 0.0)
                    .collect();
                cand.sort_unstable();
                cand.dedup();
                loss_obs.push((a.loss, cand));
            }
            Verdict::Service => {
                service[e.callee as usize] += a.service;
                blamed_calls[e.callee as usize] += 1;
            }
            Verdict::Host => {
                let mut cand = vec![u32::from(e.client_host), u32::from(e.server_host)];
                cand.dedup();
                host_obs.push((a.host, cand));
            }
            Verdict::Ok | Verdict::Downstream => {}
        }
    }
    let loss = split_by_rate(&loss_obs, &all_cross);
    let host = split_by_rate(&host_obs, &host_touch);
    let total = inp.edges.len() as u64;
    let lf = LnFactorial::new(total as usize);
    let p: Vec<f64> = (0..n_links)
        .map(|l| {
            let (a, c) = (slow_cross[l], all_cross[l] - slow_cross[l]);
            fisher_greater(&lf, a, slow_total - a, c, total - slow_total - c)
        })
        .collect();
    let q = benjamini_hochberg(&p);
    let hot = hot_level(inp);
    let mut out = Vec::new();
    for l in 0..n_links {
        for (kind, explained) in [("link", queue[l]), ("loss", loss[l])] {
            let is_hot = kind == "link" && inp.link_heat[l] > hot;
            if explained <= 0.0 && !is_hot {
                continue;
            }
            // A queue's excess is weighed by how often crossing requests are
            // slow; a loss's share already is (see `split_by_rate`).
            let precision = if kind == "loss" {
                1.0
            } else {
                slow_cross[l] as f64 / all_cross[l].max(1) as f64
            };
            let weight = if q[l] < FDR { 1.0 } else { UNTESTED_WEIGHT };
            out.push(Culprit {
                kind,
                name: inp.index.name(l as u32),
                score: ms(explained * precision * weight),
                evidence: json!({
                    "explained_ms": ms(explained),
                    "slow_crossing": slow_cross[l],
                    "crossing": all_cross[l],
                    "fisher_p": p[l],
                    "bh_q": q[l],
                    "mean_queue_us": (inp.link_heat[l] / 1e3).round(),
                    "probe_loss": (inp.link_loss[l] * 1e4).round() / 1e4,
                    "hot_but_harmless": is_hot && (q[l] >= FDR || explained <= 0.0),
                }),
            });
        }
    }
    // Like a link's, a service's excess is weighed by how often a call to
    // it is slow on its account: a healthy service whose cache misses or
    // lognormal tail make one call in fifty slow does not outrank a fault
    // that slows a fifth of them.
    for (i, &x) in service.iter().enumerate().filter(|(_, &x)| x > 0.0) {
        let precision = blamed_calls[i] as f64 / calls[i].max(1) as f64;
        out.push(Culprit {
            kind: "service",
            name: inp.services[i].clone(),
            score: ms(x * precision),
            evidence: json!({
                "explained_ms": ms(x),
                "slow_calls": blamed_calls[i],
                "calls": calls[i],
            }),
        });
    }
    for (i, &x) in host.iter().enumerate().filter(|(_, &x)| x > 0.0) {
        out.push(Culprit {
            kind: "host",
            name: inp.hosts[i].clone(),
            score: ms(x),
            evidence: json!({ "explained_ms": ms(x) }),
        });
    }
    out
}

/// Splits each observation's amount among its candidates in proportion to
/// their rates (observations blaming a candidate per edge that could have
/// hit it), re-estimating the rates from the split until they settle: the
/// expectation–maximisation of loss tomography. A candidate every
/// observation shares and few clean edges cross ends up with nearly all of
/// it; one that is only sometimes on the way keeps the little its rate
/// earns. `exposure[c]`: edges that could have hit candidate `c`.
fn split_by_rate(obs: &[(f64, Vec<u32>)], exposure: &[u64]) -> Vec<f64> {
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
    let mut explained = vec![0.0; n];
    for round in 0..30 {
        let mut count = vec![0.0; n];
        explained.iter_mut().for_each(|x| *x = 0.0);
        for (amount, cand) in obs {
            let sum: f64 = cand.iter().map(|&c| rate[c as usize]).sum();
            if sum <= 0.0 {
                continue;
            }
            for &c in cand {
                let share = rate[c as usize] / sum;
                count[c as usize] += share;
                explained[c as usize] += share * amount;
            }
        }
        if round < 29 {
            norm(&mut count);
            rate = count;
        }
    }
    explained
}

/// Mean queueing delay above which a measured link counts as hot: three
/// times the median link's.
fn hot_level(inp: &Inputs<'_>) -> f64 {
    let mut heat: Vec<f64> = (0..inp.index.links.len())
        .filter(|&l| inp.index.measured[l])
        .map(|l| inp.link_heat[l])
        .collect();
    heat.sort_by(f64::total_cmp);
    3.0 * heat.get(heat.len() / 2).copied().unwrap_or(f64::INFINITY)
}

fn hottest(inp: &Inputs<'_>) -> Vec<Culprit> {
    (0..inp.index.links.len())
        .filter(|&l| inp.index.measured[l])
        .map(|l| Culprit {
            kind: "link",
            name: inp.index.name(l as u32),
            score: inp.link_heat[l] / 1e3,
            evidence: json!({ "mean_queue_us": (inp.link_heat[l] / 1e3).round() }),
        })
        .collect()
}

fn vote(inp: &Inputs<'_>) -> Vec<Culprit> {
    let mut votes = vec![0.0; inp.index.links.len()];
    for (p, a) in inp.paths.iter().zip(inp.attr) {
        let Some(p) = p.filter(|_| a.slow) else {
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
            kind: "link",
            name: inp.index.name(l as u32),
            score: v,
            evidence: json!({ "votes": v }),
        })
        .collect()
}
