//! Culprits: links, services and hosts ranked by the excess they explain on
//! slow requests. A link must also pass a YTrace-style quasi-experimental
//! test: requests that cross it must be slow (or, for a loss, wait a
//! retransmission) more often than those that do not (one-sided Fisher
//! exact test, Benjamini–Hochberg across links), so a hot link that hurts
//! no request never outranks the one that does. One culprit per link
//! carries both its queueing and its loss evidence (`links`).

use crate::attribution::{Attribution, Verdict};
use crate::path::{HostPath, LinkIndex};
use crate::rpc::Edge;
use intpath_core::link::{DirLink, LinkName};
use intpath_core::topo::Topology;
use serde_json::json;

mod links;

use links::{link_culprits, LinkCounts};

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Culprit {
    /// `link`, `loss`, `service` or `host`, as in `truth.json`. A link is
    /// listed once: `link` when its queueing weighs more, `loss` when its
    /// loss does (`evidence.kinds` lists both when it has both).
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
    let mut c = LinkCounts {
        queue: vec![0.0; n_links],
        loss: Vec::new(),
        crossing: vec![0; n_links],
        slow_crossing: vec![0; n_links],
        gap_crossing: vec![0; n_links],
        edges: inp.edges.len() as u64,
        slow: 0,
        gaps: 0,
    };
    let mut service = vec![0.0; inp.services.len()];
    // Calls to each service, and those slow on the service's own account.
    let (mut calls, mut blamed_calls) = (
        vec![0u64; inp.services.len()],
        vec![0u64; inp.services.len()],
    );
    let mut seen = vec![u32::MAX; n_links];
    let mut host_touch = vec![0u64; inp.hosts.len()];
    // Losses, host residuals and delays on unmeasured host links each have
    // several candidates (every lossy link of the path, both ends of the
    // edge, both ends' host links); they are split below.
    let (mut loss_obs, mut host_obs, mut unmeasured_obs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (e, a)) in inp.edges.iter().zip(inp.attr).enumerate() {
        let gap = a.loss > 0.0;
        c.slow += u64::from(a.slow);
        c.gaps += u64::from(gap);
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
                    c.crossing[l as usize] += 1;
                    c.slow_crossing[l as usize] += u64::from(a.slow);
                    c.gap_crossing[l as usize] += u64::from(gap);
                }
            }
        }
        match a.verdict() {
            Verdict::Network => {
                if let Some(l) = a.hot_link {
                    c.queue[l as usize] += a.fabric - a.unmeasured;
                }
                // A delay on unmeasured host links could be on either
                // end's (the sender's uplink, the receiver's downlink):
                // split below like the losses.
                if let (Some(p), Some(down)) = (inp.paths[i], a.unmeasured_link) {
                    let leg = match p.forward.contains(&down) {
                        true => &p.forward,
                        false => &p.reverse,
                    };
                    let cand: Vec<u32> = leg
                        .iter()
                        .copied()
                        .filter(|&l| inp.index.unmeasured_host_link(l))
                        .collect();
                    unmeasured_obs.push((a.unmeasured, cand));
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
    c.loss = split_by_rate(&loss_obs, &c.crossing);
    for (l, x) in split_by_rate(&unmeasured_obs, &c.crossing)
        .into_iter()
        .enumerate()
    {
        c.queue[l] += x;
    }
    let host = split_by_rate(&host_obs, &host_touch);
    let mut out = link_culprits(inp, &c);
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
