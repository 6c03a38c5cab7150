//! From what [`crate::load`] read to attributed RPC edges: pure, so the same
//! inputs always give the same diagnosis.

use crate::attribution::{self, Attribution, ClockPair, Options};
use crate::culprits::{self, Culprit, Method};
use crate::evidence::Evidence;
use crate::hosts::Hosts;
use crate::load::{Inputs, Int};
use crate::path::{HostPath, LinkIndex, Resolver};
use crate::rejects::Rejects;
use crate::request::DiagnoseError;
use crate::rpc::{self, Callee, Edge, Entry, Failed, Unanswered, Unjoined};
use crate::spans::Parsed;
use crate::window::RUN_SLACK_NS;
use intpath_core::topo::Topology;
use intpath_store::RunId;
use std::sync::OnceLock;

/// Everything a report or a score needs.
pub struct Diagnosis {
    /// The topology paths were followed in; `None` without one.
    pub topo: Option<Topology>,
    /// Host names, indexed by the edges' host ids: the topology's, or the
    /// addresses the spans gave.
    pub hosts: Vec<String>,
    pub index: LinkIndex,
    pub edges: Vec<Edge>,
    pub services: Vec<String>,
    /// Callees without spans of their own ([`rpc::Edges::dependencies`]).
    pub dependencies: Vec<String>,
    /// Work no traced client waited on ([`rpc::Entry`]).
    pub entries: Vec<Entry>,
    /// Calls to dependencies made under those ([`rpc::Edges::entry_calls`]).
    pub entry_calls: Vec<Unjoined>,
    /// Calls to traced callees that got no answer ([`rpc::Edges::unanswered`]).
    pub unanswered: Vec<Unanswered>,
    /// Calls answered with a failure ([`rpc::Edges::failed`]).
    pub failed: Vec<Failed>,
    pub traces: Vec<String>,
    /// Per edge: forward and reverse path (`None` without a topology).
    pub paths: Vec<Option<HostPath>>,
    pub attr: Vec<Attribution>,
    pub clocks: Vec<ClockPair>,
    /// Mean queueing delay per link over the run, ns.
    pub link_heat: Vec<f64>,
    /// Probe loss fraction per link over the run.
    pub link_loss: Vec<f64>,
    pub rejects: Rejects,
    pub spans: usize,
    /// The collector run whose INT is the evidence, and that evidence;
    /// `None` for a diagnosis from traces alone.
    pub run: Option<RunId>,
    pub evidence: Option<Evidence>,
    /// Why links are not localised, when there is no INT.
    pub without_int: Option<String>,
    /// The diagnosis of a healthy period the run is compared with
    /// ([`crate::Request::baseline`]), from its traces alone.
    pub baseline: Option<Box<Diagnosis>>,
    /// The `diagnose` method's tests, run once on first use: thousands of
    /// shuffles per candidate.
    assessed: OnceLock<culprits::Assessment>,
}

impl Diagnosis {
    /// The culprits `method` names, best first (for `diagnose`, only those
    /// that passed their test).
    pub fn culprits(&self, method: Method) -> Vec<Culprit> {
        match method {
            Method::Diagnose => self.assessed().named.clone(),
            baseline => culprits::rank(&self.ranking_inputs(), baseline),
        }
    }

    /// Every candidate the `diagnose` method tested, most significant first.
    pub fn tested(&self) -> Vec<Culprit> {
        self.assessed().tested.clone()
    }

    fn assessed(&self) -> &culprits::Assessment {
        self.assessed
            .get_or_init(|| culprits::assess(&self.ranking_inputs()))
    }

    fn ranking_inputs(&self) -> culprits::Inputs<'_> {
        culprits::Inputs {
            edges: &self.edges,
            paths: &self.paths,
            attr: &self.attr,
            index: &self.index,
            services: &self.services,
            dependencies: &self.dependencies,
            entries: &self.entries,
            entry_calls: &self.entry_calls,
            hosts: &self.hosts,
            evidence: self.evidence.as_ref(),
            link_heat: &self.link_heat,
            link_loss: &self.link_loss,
            baseline: self.baseline.as_ref().map(|b| Box::new(b.ranking_inputs())),
        }
    }
}

/// Joins, places, follows and attributes; and the same for the baseline,
/// if one was given.
pub fn analyze(inp: &Inputs, options: &Options) -> Result<Diagnosis, DiagnoseError> {
    let mut d = analyze_spans(inp, &inp.spans, inp.int.as_ref(), options)?;
    d.without_int = inp.without_int.clone();
    if let Some(healthy) = &inp.baseline {
        // From its traces alone: the run's INT is of another moment. Its
        // hosts are placed as the run's are, so names match.
        let b = analyze_spans(inp, healthy, None, options)
            .map_err(|e| DiagnoseError::Baseline(Box::new(e)))?;
        d.baseline = Some(Box::new(b));
    }
    Ok(d)
}

/// [`analyze`] for one set of spans, with `int` its INT if any.
fn analyze_spans(
    inp: &Inputs,
    spans: &Parsed,
    int: Option<&Int>,
    options: &Options,
) -> Result<Diagnosis, DiagnoseError> {
    let mut hosts = match &inp.topo {
        Some(topo) => Hosts::of_topology(topo, &inp.host_map)?,
        None => Hosts::discovered(&inp.host_map),
    };
    let joined = rpc::join(&spans.spans, &mut hosts);
    let mut rejects = spans.rejects.clone();
    rejects.merge(joined.rejects);

    let mut index = match &inp.topo {
        Some(topo) => LinkIndex::new(topo),
        None => LinkIndex::default(),
    };
    let ev = int.map(|int| {
        index.mark_measured(&int.measured);
        Evidence::new(&index, &int.run, &int.samples, &int.losses, &int.counts)
    });
    let links = 0..index.links.len() as u32;
    let link_heat = links
        .clone()
        .map(|l| ev.as_ref().map_or(0.0, |e| e.mean_delay(l)))
        .collect();
    let link_loss = links
        .map(|l| ev.as_ref().map_or(0.0, |e| e.mean_loss(l)))
        .collect();

    // With INT, the calls the run's probes cover: those that began while
    // it probed (however long after it they ended).
    let probed = int.and_then(|i| i.run.span_ns);
    let in_run = |t: i64| {
        probed.is_none_or(|(first, last)| (first - RUN_SLACK_NS..=last + RUN_SLACK_NS).contains(&t))
    };
    let mut entries = joined.entries;
    entries.retain(|e| in_run(e.sr));
    let mut entry_calls = joined.entry_calls;
    entry_calls.retain(|c| in_run(c.cs));
    let mut res = inp.topo.as_ref().map(Resolver::new);
    let mut joined_edges = joined.edges;
    // Per edge, its path (`Some(None)` without a topology) or `None`: the
    // edge is dropped.
    let kept: Vec<Option<Option<HostPath>>> = joined_edges
        .iter()
        .map(|e| {
            if !in_run(e.cs) {
                rejects.add("started outside the collector run");
                return None;
            }
            match &mut res {
                Some(res) => match res.path(&index, e.client_host, e.server_host) {
                    Ok(p) => Some(Some(p.clone())),
                    Err(err) => {
                        rejects.add_with("no route", || err.to_string());
                        None
                    }
                },
                None => Some(None),
            }
        })
        .collect();
    // A dropped call was still waited on by its caller.
    for i in 0..joined_edges.len() {
        if let (None, Some(p)) = (&kept[i], joined_edges[i].parent) {
            let (cs, cr) = (joined_edges[i].cs, joined_edges[i].cr);
            let callee = Callee::Unknown;
            joined_edges[p as usize]
                .unjoined
                .push(Unjoined { cs, cr, callee });
        }
    }
    let mut edges = Vec::with_capacity(joined_edges.len());
    let mut paths = Vec::with_capacity(joined_edges.len());
    // Old position → new, for the parent links of the edges kept.
    let mut renumber = vec![None; joined_edges.len()];
    for (old, (e, path)) in joined_edges.into_iter().zip(kept).enumerate() {
        let Some(path) = path else { continue };
        paths.push(path);
        renumber[old] = Some(edges.len() as u32);
        edges.push(e);
    }
    for e in &mut edges {
        e.parent = e.parent.and_then(|p| renumber[p as usize]);
    }
    // A monolith's requests make no calls between services: its entries
    // (and its database's calls) are what there is to diagnose. Where
    // more was rejected than that, the input is the user's to fix.
    if edges.is_empty() && rejects.total() as usize >= entries.len() {
        let reason = rejects
            .main_reason()
            .unwrap_or("no client/server span pairs in the input");
        return Err(DiagnoseError::NoEdges {
            reason: reason.to_owned(),
            count: rejects.count(reason),
            total: rejects.total(),
            rejects,
        });
    }
    let path_refs: Vec<Option<&HostPath>> = paths.iter().map(Option::as_ref).collect();
    let empty = Evidence::default();
    let (attr, clocks) = attribution::attribute_with_clocks(
        &edges,
        &path_refs,
        &index,
        ev.as_ref().unwrap_or(&empty),
        options,
    );
    Ok(Diagnosis {
        topo: inp.topo.clone(),
        hosts: hosts.names().to_vec(),
        index,
        edges,
        services: joined.services,
        dependencies: joined.dependencies,
        entries,
        entry_calls,
        unanswered: joined.unanswered,
        failed: joined.failed,
        traces: joined.traces,
        paths,
        attr,
        clocks,
        link_heat,
        link_loss,
        rejects,
        spans: spans.spans.len(),
        run: int.map(|i| i.run.id),
        evidence: ev,
        without_int: None,
        baseline: None,
        assessed: OnceLock::new(),
    })
}
