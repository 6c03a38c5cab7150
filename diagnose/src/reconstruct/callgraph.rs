//! The call graph and dependency order at each service: the ways one
//! incoming request fans out, as stages of callees (the calls of a stage
//! run in parallel, stages one after another), with how often each is
//! taken. Given as JSON or learned from instrumented training traces
//! (TraceWeaver §5.2): a request whose span endpoint is not known may take
//! any of its service's variants, so the variant is part of each mapping.
//! Variants are learned per calling service as well: the caller is known
//! from the connection, and stands in for the API endpoint that TraceWeaver
//! assumes identifies a request's call graph (a service that five others
//! call fans out differently for each of them).
//!
//! Some services gather the parts of one request that reach them by
//! several ways, and the part that arrives last makes the calls
//! (DeathStarBench's compose-review: five services upload a review's
//! parts, and the upload that completes it stores the review). There the
//! caller says little (any of the five may be last) and the order of
//! arrival says nearly everything, so such a service's variants are also
//! learned by where a request stood among its own request's visits
//! ([`Arrival`]); see [`super::gather`].

use super::gather;
use super::model::Rpcs;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One way a request at a service fans out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// Callee names per stage, each stage sorted.
    pub stages: Vec<Vec<String>>,
    /// Share of the service's requests that take it (of those from
    /// `caller`, when set).
    pub share: f64,
    /// The calling service whose requests take it (`None`: any caller,
    /// and the roots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// At a service that gathers ([`CallGraph::gathering`]): the requests
    /// that take it by where they arrived among their request's visits,
    /// whatever their caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
}

/// Where one visit of a request to a service arrived among all of that
/// request's visits there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    Last,
    Earlier,
}

impl Variant {
    /// Callees in slot order (stage by stage).
    pub fn slots(&self) -> impl Iterator<Item = &str> {
        self.stages.iter().flatten().map(String::as_str)
    }
}

/// Variants per service name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallGraph {
    pub services: BTreeMap<String, Vec<Variant>>,
    /// The services that gather: per name, how many visits a request makes
    /// there (the most common count among requests whose last visit made
    /// calls).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gathering: BTreeMap<String, usize>,
}

/// Requests with several visits, one of which made calls, that training
/// must hold before a service may be taken to gather.
const MIN_GATHERED: usize = 20;
/// How much better (nats over those requests' visits) the order of
/// arrival must explain the visits' fan-outs than their callers do.
const GATHER_NATS: f64 = 10.0;

#[derive(Debug, thiserror::Error)]
pub enum CallGraphError {
    #[error("call graph: {0}")]
    Json(#[from] serde_json::Error),
    #[error("call graph: training traces have no parent links to learn from")]
    NoTruth,
}

impl CallGraph {
    pub fn from_json(text: &str) -> Result<Self, CallGraphError> {
        Ok(serde_json::from_str(text)?)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Learns the variants from instrumented RPCs: each incoming request's
    /// calls, ordered by request time, start a new stage when sent after
    /// every call of the current stage answered; and which services gather.
    pub fn learn(rpcs: &Rpcs) -> Result<Self, CallGraphError> {
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); rpcs.rpcs.len()];
        let mut any = false;
        for (i, r) in rpcs.rpcs.iter().enumerate() {
            if let Some(p) = r.truth {
                children[p as usize].push(i as u32);
                any = true;
            }
        }
        if !any {
            return Err(CallGraphError::NoTruth);
        }
        let fan_outs: Vec<Vec<Vec<String>>> = children.iter().map(|k| stages(rpcs, k)).collect();
        let truth: Vec<Option<u32>> = rpcs.rpcs.iter().map(|r| r.truth).collect();
        let roots = gather::roots(rpcs, &truth);
        let visits = (rpcs.rpcs.iter().enumerate()).filter_map(|(i, r)| {
            let t = r.server.or(r.client)?.start;
            Some((i as u32, r.callee, t))
        });
        let arrivals = gather::arrivals(visits, &roots, 2);
        let mut by_caller = Counts::new();
        let mut by_arrival = Counts::new();
        for (p, stages) in fan_outs.iter().enumerate() {
            let r = &rpcs.rpcs[p];
            let service = rpcs.services[r.callee as usize].as_str();
            let caller = r.caller.map(|c| rpcs.services[c as usize].as_str());
            count(&mut by_caller, (service, caller), stages);
            if let Some(&a) = arrivals.get(&(p as u32)) {
                count(&mut by_arrival, (service, a), stages);
            }
        }
        let gathering = gathering(
            rpcs,
            &fan_outs,
            &roots,
            &arrivals,
            (&by_caller, &by_arrival),
        );
        let mut services: BTreeMap<String, Vec<Variant>> = BTreeMap::new();
        for ((service, caller), by) in &by_caller {
            let vs = services.entry((*service).to_owned()).or_default();
            vs.extend(variants(by, |v| v.caller = caller.map(str::to_owned)));
        }
        for ((service, arrival), by) in &by_arrival {
            if gathering.contains_key(*service) {
                let vs = services.entry((*service).to_owned()).or_default();
                vs.extend(variants(by, |v| v.arrival = Some(*arrival)));
            }
        }
        for vs in services.values_mut() {
            vs.sort_by(|a, b| {
                (a.arrival.cmp(&b.arrival))
                    .then(a.caller.cmp(&b.caller))
                    .then(b.share.total_cmp(&a.share))
            });
        }
        Ok(CallGraph {
            services,
            gathering,
        })
    }
}

/// The fan-out of a request whose calls are `kids`: ordered by request
/// time, a call starts a new stage when sent after every call of the
/// current stage answered; each stage sorted.
fn stages(rpcs: &Rpcs, kids: &[u32]) -> Vec<Vec<String>> {
    let mut calls: Vec<(i64, i64, &str)> = kids
        .iter()
        .filter_map(|&k| {
            let r = &rpcs.rpcs[k as usize];
            let c = r.client?;
            Some((c.start, c.end, rpcs.services[r.callee as usize].as_str()))
        })
        .collect();
    calls.sort();
    let mut stages: Vec<Vec<String>> = Vec::new();
    let mut stage_end = i64::MIN;
    for (start, end, callee) in calls {
        if stages.is_empty() || start >= stage_end {
            stages.push(Vec::new());
        }
        stages
            .last_mut()
            .into_iter()
            .for_each(|s| s.push(callee.to_owned()));
        stage_end = stage_end.max(end);
    }
    stages.iter_mut().for_each(|s| s.sort());
    stages
}

/// Per (service, class of request): how many requests took each fan-out.
type Counts<'a, K> = BTreeMap<(&'a str, K), BTreeMap<Vec<Vec<String>>, usize>>;

fn count<'a, K: Ord>(counts: &mut Counts<'a, K>, key: (&'a str, K), stages: &[Vec<String>]) {
    *counts
        .entry(key)
        .or_default()
        .entry(stages.to_vec())
        .or_default() += 1;
}

/// One class's fan-outs as variants with their shares, `tag` saying whose.
fn variants<'a>(
    by: &'a BTreeMap<Vec<Vec<String>>, usize>,
    tag: impl Fn(&mut Variant) + 'a,
) -> impl Iterator<Item = Variant> + 'a {
    let total: usize = by.values().sum();
    by.iter().map(move |(stages, &n)| {
        let mut v = Variant {
            stages: stages.clone(),
            share: n as f64 / total as f64,
            caller: None,
            arrival: None,
        };
        tag(&mut v);
        v
    })
}

/// The services that gather, with the visits a request makes there: those
/// where, over the visits of requests that visit more than once, the
/// visits' fan-outs are far likelier given where each arrived than given
/// its caller ([`GATHER_NATS`]), and enough of those requests made calls.
fn gathering(
    rpcs: &Rpcs,
    fan_outs: &[Vec<Vec<String>>],
    roots: &[Option<u32>],
    arrivals: &HashMap<u32, Arrival>,
    (by_caller, by_arrival): (&Counts<Option<&str>>, &Counts<Arrival>),
) -> BTreeMap<String, usize> {
    fn ln_share(by: Option<&BTreeMap<Vec<Vec<String>>, usize>>, stages: &[Vec<String>]) -> f64 {
        let Some(by) = by else { return 0.0 };
        let n = by.get(stages).copied().unwrap_or(0);
        (n as f64 / by.values().sum::<usize>().max(1) as f64).ln()
    }
    // Per service: the log-likelihood gain, and per request (root) its
    // visits and whether one made calls.
    let mut gain: BTreeMap<&str, f64> = BTreeMap::new();
    let mut visits: BTreeMap<&str, BTreeMap<u32, (usize, bool)>> = BTreeMap::new();
    for (&p, a) in arrivals {
        let (r, stages) = (&rpcs.rpcs[p as usize], &fan_outs[p as usize]);
        let (Some(root), service) = (roots[p as usize], rpcs.services[r.callee as usize].as_str())
        else {
            continue;
        };
        let caller = r.caller.map(|c| rpcs.services[c as usize].as_str());
        *gain.entry(service).or_default() += ln_share(by_arrival.get(&(service, *a)), stages)
            - ln_share(by_caller.get(&(service, caller)), stages);
        let v = visits.entry(service).or_default().entry(root).or_default();
        v.0 += 1;
        v.1 |= !stages.is_empty();
    }
    let mut out = BTreeMap::new();
    for (service, g) in gain {
        // How many visits the requests that made calls there made.
        let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
        for &(n, calls) in visits.get(service).into_iter().flat_map(BTreeMap::values) {
            if calls {
                *sizes.entry(n).or_default() += 1;
            }
        }
        let gathered: usize = sizes.values().sum();
        let parts = (sizes.iter()).max_by_key(|&(n, c)| (c, std::cmp::Reverse(*n)));
        if let Some((&parts, _)) = parts.filter(|_| gathered >= MIN_GATHERED && g >= GATHER_NATS) {
            out.insert(service.to_owned(), parts);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::model::{Rpc, Side};
    use super::*;

    fn rpc(caller: Option<u16>, callee: u16, t: (i64, i64), truth: Option<u32>) -> Rpc {
        let side = Side {
            span: 0,
            start: t.0,
            end: t.1,
            executor: Default::default(),
        };
        Rpc {
            caller,
            callee,
            client: caller.map(|_| side),
            server: Some(side),
            truth,
            hidden: None,
        }
    }

    #[test]
    fn learns_stages_from_timing() {
        // a calls b and c in parallel, then d.
        let rpcs = Rpcs {
            services: ["a", "b", "c", "d"].map(String::from).to_vec(),
            rpcs: vec![
                rpc(None, 0, (0, 100), None),
                rpc(Some(0), 2, (10, 40), Some(0)),
                rpc(Some(0), 1, (10, 30), Some(0)),
                rpc(Some(0), 3, (40, 90), Some(0)),
            ],
        };
        let cg = CallGraph::learn(&rpcs).unwrap();
        let a = &cg.services["a"];
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].stages, vec![vec!["b", "c"], vec!["d"]]);
        assert_eq!(cg.services["b"][0].stages, Vec::<Vec<String>>::new());
        assert_eq!(cg.services["b"][0].caller.as_deref(), Some("a"));
        assert_eq!(a[0].caller, None);
        let back = CallGraph::from_json(&cg.to_json()).unwrap();
        assert_eq!(back, cg);
        // Graphs written before callers were learned still read.
        let old = r#"{"services":{"a":[{"stages":[["b"]],"share":1.0}]}}"#;
        assert_eq!(
            CallGraph::from_json(old).unwrap().services["a"][0].caller,
            None
        );
    }

    #[test]
    fn a_shared_service_fans_out_by_caller() {
        // x and y both call s; only x's requests make s call t.
        let rpcs = Rpcs {
            services: ["x", "y", "s", "t"].map(String::from).to_vec(),
            rpcs: vec![
                rpc(None, 0, (0, 100), None),
                rpc(Some(0), 2, (10, 90), Some(0)),
                rpc(Some(2), 3, (20, 80), Some(1)),
                rpc(None, 1, (200, 300), None),
                rpc(Some(1), 2, (210, 290), Some(3)),
            ],
        };
        let s = &CallGraph::learn(&rpcs).unwrap().services["s"];
        let by: Vec<(Option<&str>, usize, f64)> = s
            .iter()
            .map(|v| (v.caller.as_deref(), v.stages.len(), v.share))
            .collect();
        assert_eq!(by, vec![(Some("x"), 1, 1.0), (Some("y"), 0, 1.0)]);
    }

    /// `n` requests at `front`, each sending its parts to `s` by way of `x`
    /// and `y`; the part whose visit to `s` arrives last calls `t`. Which
    /// of `x`'s and `y`'s arrives last: `x_last(k)` for request `k`.
    fn gathered(n: usize, x_last: impl Fn(usize) -> bool) -> Rpcs {
        let mut rpcs = Rpcs {
            services: ["front", "x", "y", "s", "t"].map(String::from).to_vec(),
            rpcs: Vec::new(),
        };
        for k in 0..n {
            let t0 = k as i64 * 1000;
            let root = rpcs.rpcs.len() as u32;
            rpcs.rpcs.push(rpc(None, 0, (t0, t0 + 900), None));
            let (x_at, y_at) = match x_last(k) {
                true => (t0 + 300, t0 + 200),
                false => (t0 + 200, t0 + 300),
            };
            for (via, at) in [(1, x_at), (2, y_at)] {
                let part = rpcs.rpcs.len() as u32;
                rpcs.rpcs
                    .push(rpc(Some(0), via, (t0 + 100, t0 + 800), Some(root)));
                let visit = rpcs.rpcs.len() as u32;
                rpcs.rpcs
                    .push(rpc(Some(via), 3, (at, t0 + 700), Some(part)));
                if at == t0 + 300 {
                    rpcs.rpcs
                        .push(rpc(Some(3), 4, (at + 50, at + 100), Some(visit)));
                }
            }
        }
        rpcs
    }

    #[test]
    fn a_service_whose_last_arriving_part_makes_the_calls_gathers() {
        // Either caller's part may be the last: the arrival tells.
        let cg = CallGraph::learn(&gathered(40, |k| k % 3 == 0)).unwrap();
        assert_eq!(cg.gathering, [("s".to_owned(), 2)].into());
        let by_arrival: Vec<(Arrival, usize, f64)> = (cg.services["s"].iter())
            .filter_map(|v| Some((v.arrival?, v.stages.len(), v.share)))
            .collect();
        assert_eq!(
            by_arrival,
            vec![(Arrival::Last, 1, 1.0), (Arrival::Earlier, 0, 1.0)]
        );
        // Each caller's own variants stay, for requests whose arrival is
        // not known.
        assert!(cg.services["s"]
            .iter()
            .any(|v| v.caller.as_deref() == Some("x")));
        let back = CallGraph::from_json(&cg.to_json()).unwrap();
        assert_eq!(back, cg);
        // Where `x`'s part is always the last, its caller says as much.
        assert!(CallGraph::learn(&gathered(40, |_| true))
            .unwrap()
            .gathering
            .is_empty());
        // Too few requests to say.
        assert!(CallGraph::learn(&gathered(10, |k| k % 3 == 0))
            .unwrap()
            .gathering
            .is_empty());
    }
}
