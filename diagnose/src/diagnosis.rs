//! One diagnosis from files to attributed edges: the library entry point the
//! CLI and the evaluation call with typed values.

use crate::attribution::{self, Attribution, ClockPair, Options};
use crate::evidence::Evidence;
use crate::hosts::{HostMapError, Hosts};
use crate::path::{HostPath, LinkIndex, Resolver};
use crate::rejects::Rejects;
use crate::rpc::{self, Edge};
use crate::spans::{self, Format, SpansError};
use crate::window::SpanWindow;
use intpath_core::link::DirLink;
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_store::samples;
use intpath_store::{Db, Store, StoreError};
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DiagnoseError {
    #[error("{0}: cannot read traces: {1}")]
    Read(String, std::io::Error),
    #[error("{0}: {1}")]
    Spans(String, SpansError),
    #[error(transparent)]
    HostMap(#[from] HostMapError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}: the database holds no collector run with probes")]
    NoRun(String),
    #[error("no usable RPC edge: {reason} ({count} of {total} rejects); see the rejects above")]
    NoEdges {
        reason: String,
        count: u64,
        total: u64,
    },
    #[error("--strict: {0} spans or edges rejected (first reason: {1})")]
    Strict(u64, String),
    #[error("{0}: the database holds no spans; send traces to `intpath-collector receive` or pass --traces")]
    NoSpans(String),
    #[error("{0}: no stored span started within {1}; pick the run (--run) or the window (--since/--until), or --all-spans")]
    NoSpansInWindow(String, String),
    #[error("{0}: {1}")]
    Window(String, String),
    #[error("cannot start the database runtime: {0}")]
    Runtime(std::io::Error),
}

/// What to diagnose.
pub struct Request {
    /// A span file; `None` reads the spans the OTLP receiver stored in `db`.
    pub traces: Option<PathBuf>,
    pub db: Db,
    pub topo: Topology,
    /// The plan in force; `None` reads the run's own plan from the database.
    pub plan: Option<Plan>,
    pub format: Option<Format>,
    pub host_map: HashMap<String, String>,
    pub options: Options,
    pub strict: bool,
    /// Which stored spans to read when `traces` is `None`.
    pub window: SpanWindow,
}

impl Request {
    /// Spans from `traces` (or the database), the run's own plan, the
    /// format detected, no host map, default options, every span read.
    pub fn new(traces: Option<PathBuf>, db: Db, topo: Topology) -> Self {
        Request {
            traces,
            db,
            topo,
            plan: None,
            format: None,
            host_map: HashMap::new(),
            options: Options::default(),
            strict: false,
            window: SpanWindow::default(),
        }
    }

    /// Diagnoses what `intpath diagnose synth` wrote into `dir` (its OTLP
    /// file and database; the run's own plan) with default options.
    pub fn synth_output(dir: &std::path::Path, topo: Topology) -> Self {
        Request::new(
            Some(dir.join("traces.otlp.json")),
            dir.join("telemetry.db").into(),
            topo,
        )
    }
}

/// Everything a report or a score needs.
pub struct Diagnosis {
    pub topo: Topology,
    pub index: LinkIndex,
    pub edges: Vec<Edge>,
    pub services: Vec<String>,
    pub traces: Vec<String>,
    /// Per edge: forward and reverse path.
    pub paths: Vec<HostPath>,
    pub attr: Vec<Attribution>,
    pub clocks: Vec<ClockPair>,
    /// Mean queueing delay per link over the run, ns.
    pub link_heat: Vec<f64>,
    /// Probe loss fraction per link over the run.
    pub link_loss: Vec<f64>,
    pub rejects: Rejects,
    pub spans: usize,
    /// The INT evidence the attribution read (kept for re-attribution).
    pub evidence: Evidence,
}

impl Diagnosis {
    pub fn host_names(&self) -> Vec<String> {
        self.topo.hosts().iter().map(|h| h.name.clone()).collect()
    }

    /// The inputs of a culprit ranking.
    pub fn ranking_inputs<'a>(
        &'a self,
        paths: &'a [Option<&'a HostPath>],
        hosts: &'a [String],
    ) -> crate::culprits::Inputs<'a> {
        crate::culprits::Inputs {
            edges: &self.edges,
            paths,
            attr: &self.attr,
            index: &self.index,
            services: &self.services,
            hosts,
            evidence: Some(&self.evidence),
            link_heat: &self.link_heat,
            link_loss: &self.link_loss,
        }
    }
}

fn read_file(
    path: &std::path::Path,
    format: Option<Format>,
) -> Result<spans::Parsed, DiagnoseError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| DiagnoseError::Read(name.clone(), e))?;
    tracing::info!("{name}: {} MB of spans", text.len() / 1_000_000);
    spans::parse(&text, format).map_err(|e| DiagnoseError::Spans(name, e))
}

/// The spans the collector's OTLP receiver stored within `window`, and the
/// run the window belongs to (whose INT is then the evidence).
async fn read_store(
    db: &Db,
    window: SpanWindow,
) -> Result<(spans::Parsed, Option<samples::Run>), DiagnoseError> {
    let store = Store::open_existing(db).await?;
    let runs = samples::runs(&store).await?;
    let run = window
        .run(&runs)
        .map_err(|e| DiagnoseError::Window(db.to_string(), e))?;
    let (since, until) = window.bounds(run);
    let stored = store.spans_between(since, until).await?;
    if stored.spans.is_empty() {
        let any = store.spans_between(i64::MIN, i64::MAX).await?;
        store.close().await;
        return Err(match (any.spans.is_empty(), run) {
            (true, _) => DiagnoseError::NoSpans(db.to_string()),
            (false, Some(r)) => {
                DiagnoseError::NoSpansInWindow(db.to_string(), format!("run {}", r.id))
            }
            (false, None) => {
                DiagnoseError::NoSpansInWindow(db.to_string(), format!("[{since}, {until}] ns"))
            }
        });
    }
    store.close().await;
    tracing::info!("{db}: {} stored spans", stored.spans.len());
    Ok((spans::from_store(&stored), run.cloned()))
}

/// Reads, joins, resolves and attributes.
pub fn diagnose(req: Request) -> Result<Diagnosis, DiagnoseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(DiagnoseError::Runtime)?;
    let (parsed, window_run) = match &req.traces {
        Some(path) => (read_file(path, req.format)?, None),
        None => rt.block_on(read_store(&req.db, req.window))?,
    };
    let mut hosts = Hosts::of_topology(&req.topo, &req.host_map)?;
    let joined = rpc::join(&parsed.spans, &mut hosts);
    let mut rejects = parsed.rejects;
    rejects.merge(joined.rejects);

    let (run, samples, losses) = rt.block_on(async {
        let store = Store::open_existing(&req.db).await?;
        let runs = match window_run {
            Some(run) => vec![run],
            None => samples::runs(&store).await?,
        };
        let (lo, hi) = joined
            .edges
            .iter()
            .fold((i64::MAX, i64::MIN), |(lo, hi), e| {
                (lo.min(e.cs), hi.max(e.cr))
            });
        let Some(run) = samples::overlapping_most(runs, lo, hi) else {
            return Err(DiagnoseError::NoRun(req.db.to_string()));
        };
        let (a, b) = run.span_ns.unwrap_or_default();
        let samples = samples::link_samples(&store, run.id, a, b).await?;
        let losses = samples::path_loss(&store, &run, a, b).await?;
        store.close().await;
        Ok((run, samples, losses))
    })?;

    let mut index = LinkIndex::new(&req.topo);
    match &req.plan {
        Some(plan) => index.mark_measured(&plan_links(&req.topo, plan)),
        None => {
            let links: Vec<&DirLink> = run
                .paths
                .iter()
                .flat_map(|(_, ls)| ls)
                .filter_map(|&l| run.links.get(l as usize))
                .collect();
            index.mark_measured(links);
        }
    }
    let ev = Evidence::new(&index, &run, &samples, &losses);
    let link_heat = (0..index.links.len() as u32)
        .map(|l| ev.mean_delay(l))
        .collect();
    let link_loss = (0..index.links.len() as u32)
        .map(|l| ev.mean_loss(l))
        .collect();

    let (first, last) = run.span_ns.unwrap_or_default();
    let slack = 1_000_000_000;
    let mut res = Resolver::new(&req.topo);
    let mut edges = Vec::with_capacity(joined.edges.len());
    let mut paths = Vec::with_capacity(joined.edges.len());
    // Old position → new, for the parent links of the edges kept.
    let mut renumber = vec![None; joined.edges.len()];
    for (old, e) in joined.edges.into_iter().enumerate() {
        if e.cs < first - slack || e.cr > last + slack {
            rejects.add("outside every collector run");
            continue;
        }
        match res.path(&index, e.client_host, e.server_host) {
            Ok(p) => {
                paths.push(p.clone());
                renumber[old] = Some(edges.len() as u32);
                edges.push(e);
            }
            Err(err) => rejects.add_with("no route", || err.to_string()),
        }
    }
    for e in &mut edges {
        e.parent = e.parent.and_then(|p| renumber[p as usize]);
    }
    if edges.is_empty() {
        let reason = rejects
            .main_reason()
            .unwrap_or("no client/server span pairs in the input");
        return Err(DiagnoseError::NoEdges {
            reason: reason.to_owned(),
            count: rejects.count(reason),
            total: rejects.total(),
        });
    }
    if req.strict && rejects.total() > 0 {
        let reason = rejects.main_reason().unwrap_or_default().to_owned();
        return Err(DiagnoseError::Strict(rejects.total(), reason));
    }
    let path_refs: Vec<Option<&HostPath>> = paths.iter().map(Some).collect();
    let (attr, clocks) =
        attribution::attribute_with_clocks(&edges, &path_refs, &index, &ev, &req.options);
    Ok(Diagnosis {
        topo: req.topo,
        index,
        edges,
        services: joined.services,
        traces: joined.traces,
        paths,
        attr,
        clocks,
        link_heat,
        link_loss,
        rejects,
        spans: parsed.spans.len(),
        evidence: ev,
    })
}

/// The directed links a plan's paths cross.
pub fn plan_links(topo: &Topology, plan: &Plan) -> Vec<DirLink> {
    plan.paths
        .iter()
        .flat_map(|p| p.nodes.iter().zip(&p.egress_ports))
        .filter_map(|(n, &port)| DirLink::leaving(topo, n, port))
        .collect()
}
