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

use super::model::Rpcs;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
}

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
    /// every call of the current stage answered.
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
        type Key<'a> = (&'a str, Option<&'a str>);
        let mut counts: BTreeMap<Key, BTreeMap<Vec<Vec<String>>, usize>> = BTreeMap::new();
        for (p, kids) in children.iter().enumerate() {
            let service = rpcs.services[rpcs.rpcs[p].callee as usize].as_str();
            let caller = rpcs.rpcs[p]
                .caller
                .map(|c| rpcs.services[c as usize].as_str());
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
            *counts
                .entry((service, caller))
                .or_default()
                .entry(stages)
                .or_default() += 1;
        }
        let mut services: BTreeMap<String, Vec<Variant>> = BTreeMap::new();
        for ((service, caller), by) in counts {
            let total: usize = by.values().sum();
            let vs = services.entry(service.to_owned()).or_default();
            vs.extend(by.into_iter().map(|(stages, n)| Variant {
                stages,
                share: n as f64 / total as f64,
                caller: caller.map(str::to_owned),
            }));
            vs.sort_by(|a, b| a.caller.cmp(&b.caller).then(b.share.total_cmp(&a.share)));
        }
        Ok(CallGraph { services })
    }
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
}
