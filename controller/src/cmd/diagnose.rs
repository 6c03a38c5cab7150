//! `intpath diagnose`: per-request network evidence for distributed traces.

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use intpath_collector::store::{Db, RunId};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_diagnose::attribution::Options;
use intpath_diagnose::critical::critical_paths;
use intpath_diagnose::culprits::{blamed_links, rank, Culprit, Method};
use intpath_diagnose::hosts::HostResolver;
use intpath_diagnose::path::HostPath;
use intpath_diagnose::reconstruct::callgraph::CallGraph;
use intpath_diagnose::reconstruct::request::{
    self as reconstruct, read_spans, service_confidence, Graph, Method as RecMethod,
    Request as RecRequest, Telemetry,
};
use intpath_diagnose::spans::Format;
use intpath_diagnose::synth::{self, App, FaultSpec};
use intpath_diagnose::{diagnose, report, Diagnosis, Request, SpanWindow};
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a workload with known faults: traces, telemetry, topology,
    /// plan and truth.
    Synth(SynthArgs),
    /// Attribute every RPC edge: service, fabric, loss, host.
    Rpcs(DiagArgs),
    /// Rank links, services and hosts by the excess they explain.
    Culprits(CulpritArgs),
    /// Per trace: the critical path and the component it is blamed on.
    Traces(DiagArgs),
    /// Infer parent links from timestamps alone (TraceWeaver, WAP5, FCFS),
    /// with INT bounds for uninstrumented services (tw-int).
    Reconstruct(ReconstructArgs),
}

#[derive(clap::Args)]
struct ReconstructArgs {
    /// Spans whose server spans name their client spans (connection
    /// pairing) and whose client spans have no parents.
    #[arg(long)]
    traces: PathBuf,
    /// Call graph JSON ({"services": {name: [{stages, share}]}}).
    #[arg(long, conflicts_with = "train", required_unless_present = "train")]
    call_graph: Option<PathBuf>,
    /// Instrumented spans to learn the call graph from.
    #[arg(long)]
    train: Option<PathBuf>,
    /// tw (TraceWeaver), tw-int (TraceWeaver with INT bounds), wap5, fcfs.
    #[arg(long, default_value = "tw")]
    algo: RecMethod,
    /// Treat SERVICE as uninstrumented: its spans are dropped and its
    /// times come from its peers' (needs --db and --topo).
    #[arg(long = "blackbox", value_name = "SERVICE")]
    blackbox: Vec<String>,
    /// The input is instrumented: ignore its parent links, then score the
    /// reconstruction against them.
    #[arg(long)]
    strip_parents: bool,
    /// The collector's telemetry database (for --blackbox): a SQLite file
    /// or a postgres:// URL.
    #[arg(long)]
    db: Option<Db>,
    /// Topology file or generator (for --blackbox).
    #[arg(long)]
    topo: Option<String>,
    /// Refinement rounds of tw.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where to write the reconstructed OTLP JSON (default: stdout).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write the call graph used (given or learned) here.
    #[arg(long)]
    save_call_graph: Option<PathBuf>,
}

#[derive(clap::Args)]
struct SynthArgs {
    /// Topology file or generator (fattree:k=4, leafspine:…).
    #[arg(long)]
    topo: String,
    #[arg(long, default_value = "hotel")]
    app: App,
    /// KIND:TARGET[:AMOUNT[:SHARE]]: service:profile:5:0.3, link:s1:1->s5:5,
    /// loss:auto:0.05, host:h3:3, decoy:auto:8, incast:h3:5 (the host's
    /// downlink, named as a link in truth.json). TARGET may be auto.
    #[arg(long)]
    fault: Vec<FaultSpec>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 2000)]
    requests: usize,
    /// Requests per second.
    #[arg(long, default_value_t = 200.0)]
    rate: f64,
    /// INT probes per second per plan path.
    #[arg(long, default_value_t = 50.0)]
    probe_rate: f64,
    #[arg(long)]
    out: PathBuf,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    Table,
    Json,
    Csv,
}

#[derive(clap::Args)]
struct DiagArgs {
    /// Spans: OTLP JSON, Jaeger JSON or Zipkin v2 JSON (one document or JSON
    /// Lines). Default: the spans the collector's OTLP receiver stored in --db.
    #[arg(long)]
    traces: Option<PathBuf>,
    /// The collector's telemetry database: a SQLite file or a `postgres://`
    /// URL.
    #[arg(long)]
    db: Db,
    /// Topology file or generator.
    #[arg(long)]
    topo: String,
    /// The plan in force (default: the run's own, from the database).
    #[arg(long)]
    plan: Option<PathBuf>,
    /// Span format, instead of detecting it from the content.
    #[arg(long)]
    trace_format: Option<Format>,
    /// JSON object: IP, host name or service name → topology host.
    #[arg(long)]
    host_map: Option<PathBuf>,
    /// Fail when any span or edge is rejected.
    #[arg(long)]
    strict: bool,
    /// Without --traces: diagnose the spans of this collector run (default:
    /// the newest run with probes), sent while it probed.
    #[arg(long, conflicts_with_all = ["since", "until", "all_spans"])]
    run: Option<RunId>,
    /// Without --traces: only spans that started at or after this Unix
    /// time, in seconds (instead of a run's window).
    #[arg(long, conflicts_with = "all_spans")]
    since: Option<f64>,
    /// Without --traces: only spans that started at or before this Unix
    /// time, in seconds.
    #[arg(long, conflicts_with = "all_spans")]
    until: Option<f64>,
    /// Without --traces: every stored span, whichever run it came with.
    #[arg(long)]
    all_spans: bool,
    #[arg(long, value_enum, default_value = "table")]
    format: Output,
    /// Rows of the table.
    #[arg(long, default_value_t = 20)]
    limit: usize,
}

#[derive(clap::Args)]
struct CulpritArgs {
    #[command(flatten)]
    diag: DiagArgs,
    /// diagnose (traces + INT), or a baseline: hottest (INT only), vote (traces only).
    #[arg(long, default_value = "diagnose")]
    method: Method,
    /// Culprits in the summary.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Also draw the queueing-delay heatmaps (snapshot.png, timeline.png)
    /// into this directory, the top link culprits' cells outlined.
    #[arg(long)]
    heatmap: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    match a.command {
        Command::Synth(s) => run_synth(s),
        Command::Reconstruct(r) => run_reconstruct(r),
        Command::Rpcs(d) => {
            let (format, limit) = (d.format, d.limit);
            let dg = load(d)?;
            let text = match format {
                Output::Json => report::rpcs_json(&dg),
                Output::Csv => report::rpcs_csv(&dg),
                Output::Table => report::table(&dg, limit) + &report::summary(&dg, &[], 0),
            };
            super::emit(None, &text)
        }
        Command::Traces(d) => {
            let (format, limit) = (d.format, d.limit);
            let dg = load(d)?;
            let blames = critical_paths(&dg.edges, &dg.attr);
            let text = match format {
                Output::Json => report::traces_json(&dg, &blames),
                Output::Table | Output::Csv => report::traces_table(&dg, &blames, limit),
            };
            super::emit(None, &text)
        }
        Command::Culprits(c) => {
            let (format, limit) = (c.diag.format, c.diag.limit);
            let (dg, ranking) = culprits(c.diag, c.method, c.heatmap.as_deref())?;
            let text = match format {
                Output::Json => report::culprits_json(&dg, &ranking),
                Output::Csv => report::culprits_csv(&ranking),
                Output::Table => report::table(&dg, limit) + &report::summary(&dg, &ranking, c.top),
            };
            super::emit(None, &text)
        }
    }
}

/// `culprits`' diagnosis and ranking, and its outlined heatmaps in
/// `heatmap` when given.
fn culprits(
    d: DiagArgs,
    method: Method,
    heatmap: Option<&std::path::Path>,
) -> Result<(Diagnosis, Vec<Culprit>)> {
    let db = d.db.clone();
    let dg = load(d)?;
    let paths: Vec<Option<&HostPath>> = dg.paths.iter().map(Some).collect();
    let hosts = dg.host_names();
    let ranking = rank(&dg.ranking_inputs(&paths, &hosts), method);
    if let Some(dir) = heatmap {
        outlined_heatmaps(&dg, &ranking, db, dir)?;
    }
    Ok((dg, ranking))
}

/// `intpath diagnose culprits --db DB --topo TOPO --heatmap DIR`, for a
/// caller that has just collected `db` (the workload demo).
pub fn culprits_of_db(
    db: &Db,
    run: RunId,
    topo: &std::path::Path,
    heatmap: &std::path::Path,
) -> Result<(Diagnosis, Vec<Culprit>)> {
    let d = DiagArgs {
        traces: None,
        db: db.clone(),
        topo: topo.display().to_string(),
        plan: None,
        trace_format: None,
        host_map: None,
        strict: false,
        run: Some(run),
        since: None,
        until: None,
        all_spans: false,
        format: Output::Table,
        limit: 0,
    };
    culprits(d, Method::Diagnose, Some(heatmap))
}

/// Link culprits among the top three, drawn with their cells outlined.
fn outlined_heatmaps(
    dg: &Diagnosis,
    ranking: &[Culprit],
    db: Db,
    dir: &std::path::Path,
) -> Result<()> {
    use intpath_collector::heatmap::{render_outlined, HeatmapKind, HeatmapRequest};
    use intpath_collector::query::{Metric, Stat, TimeRange};
    let links = blamed_links(ranking, &dg.topo, 3);
    std::fs::create_dir_all(dir).with_context(|| format!("--heatmap {}", dir.display()))?;
    let all = TimeRange {
        from: None,
        to: None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    for (name, kind) in [
        ("snapshot.png", HeatmapKind::Snapshot(all)),
        (
            "timeline.png",
            HeatmapKind::Timeline {
                range: all,
                hosts: false,
            },
        ),
    ] {
        let req = HeatmapRequest {
            db: db.clone(),
            run: None,
            metric: Metric::Qdelay,
            stat: Stat::Mean,
            out: dir.join(name),
            kind,
        };
        rt.block_on(render_outlined(&req, &links))?;
        eprintln!(
            "wrote {} ({} culprit links outlined)",
            req.out.display(),
            links.len()
        );
    }
    Ok(())
}

fn run_reconstruct(r: ReconstructArgs) -> Result<()> {
    let graph = match (&r.call_graph, &r.train) {
        (Some(p), _) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("{}: cannot read", p.display()))?;
            Graph::Given(CallGraph::from_json(&text).with_context(|| p.display().to_string())?)
        }
        (None, Some(t)) => Graph::Train(read_spans(t)?),
        (None, None) => anyhow::bail!("pass --call-graph or --train"),
    };
    let telemetry = match (&r.db, &r.topo) {
        (Some(db), Some(topo)) => Some(Telemetry {
            request: Request {
                traces: Some(r.traces.clone()),
                db: db.clone(),
                topo: Topology::load(topo)?,
                plan: None,
                format: None,
                host_map: HashMap::new(),
                options: Options::default(),
                strict: false,
                window: SpanWindow::default(),
            },
        }),
        _ => None,
    };
    let started = std::time::Instant::now();
    let spans = read_spans(&r.traces)?;
    let out = reconstruct::run(RecRequest {
        spans,
        graph,
        method: r.algo,
        blackbox: r.blackbox,
        strip_parents: r.strip_parents,
        telemetry,
        rounds: r.rounds,
    })?;
    if let Some(p) = &r.save_call_graph {
        super::emit(Some(p), &out.graph.to_json())?;
    }
    super::emit(r.out.as_deref(), &out.document.to_string())?;
    eprintln!(
        "{} RPCs reconstructed in {:.2} s",
        out.rpcs.rpcs.len(),
        started.elapsed().as_secs_f64()
    );
    eprintln!("{:<20} {:>7} {:>10}", "service", "calls", "confidence");
    for (service, calls, conf) in service_confidence(&out.rpcs, &out.rec) {
        eprintln!("{service:<20} {calls:>7} {conf:>10.3}");
    }
    if let Some(s) = &out.score {
        eprintln!(
            "against the input's links: end-to-end {:.1} % of {} traces, links {:.1} %",
            100.0 * s.end_to_end,
            s.traces,
            100.0 * s.links
        );
        for p in &s.per_service {
            eprintln!(
                "  {:<20} {:>5.1} % of {} calls",
                p.service,
                100.0 * p.accuracy,
                p.calls
            );
        }
    }
    Ok(())
}

fn run_synth(s: SynthArgs) -> Result<()> {
    let cfg = synth::Config {
        topo: Topology::load(&s.topo)?,
        app: s.app,
        faults: s.fault,
        seed: s.seed,
        requests: s.requests,
        rate: s.rate,
        probe_rate: s.probe_rate,
        out: s.out,
    };
    let truth = synth::generate(&cfg)?;
    for f in &truth.faults {
        println!(
            "fault {} {} (amount {}, share {})",
            f.kind, f.name, f.amount, f.share
        );
    }
    println!(
        "wrote {} RPC edges' traces, telemetry, topology, plan and truth to {}",
        truth.edges.len(),
        cfg.out.display()
    );
    Ok(())
}

/// The stored spans `--run`, `--since`/`--until` or `--all-spans` pick.
fn span_window(d: &DiagArgs) -> SpanWindow {
    let ns = |s: f64| (s * 1e9) as i64;
    match (d.run, d.since, d.until, d.all_spans) {
        (_, _, _, true) => SpanWindow::All,
        (Some(id), ..) => SpanWindow::Run(id),
        (None, None, None, false) => SpanWindow::LatestRun,
        (None, since, until, false) => {
            SpanWindow::Between(since.map_or(i64::MIN, ns), until.map_or(i64::MAX, ns))
        }
    }
}

fn load(d: DiagArgs) -> Result<Diagnosis> {
    let plan = match &d.plan {
        Some(p) => Some(Plan::load(p)?),
        None => None,
    };
    let host_map = match &d.host_map {
        Some(p) => HostResolver::load_map(p)?,
        None => HashMap::new(),
    };
    let window = span_window(&d);
    let dg = diagnose(Request {
        traces: d.traces,
        db: d.db,
        topo: Topology::load(&d.topo).with_context(|| format!("--topo {}", d.topo))?,
        plan,
        format: d.trace_format,
        host_map,
        options: Options::default(),
        strict: d.strict,
        window,
    })?;
    for (reason, n, example) in dg.rejects.iter() {
        tracing::warn!(
            "rejected {n}: {reason}{}",
            example
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default()
        );
    }
    Ok(dg)
}
