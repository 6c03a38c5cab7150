//! `intpath diagnose`: per-request network evidence for distributed traces.

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_diagnose::critical::critical_paths;
use intpath_diagnose::culprits::{blamed_links, rank, Culprit, Method};
use intpath_diagnose::hosts::HostResolver;
use intpath_diagnose::path::HostPath;
use intpath_diagnose::spans::Format;
use intpath_diagnose::{diagnose, report, Diagnosis, Request, SpanWindow};
use intpath_store::{Db, RunId};
use std::collections::HashMap;
use std::path::PathBuf;

mod latency;
mod reconstruct;
mod synth;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a workload with known faults: traces, telemetry, topology,
    /// plan and truth.
    Synth(synth::Args),
    /// Attribute every RPC edge: service, fabric, loss, host.
    Rpcs(DiagArgs),
    /// Rank links, services and hosts by the excess they explain.
    Culprits(CulpritArgs),
    /// Per trace: the critical path and the component it is blamed on.
    Traces(DiagArgs),
    /// Infer parent links from timestamps alone (TraceWeaver, WAP5, FCFS),
    /// with INT bounds for uninstrumented services (tw-int).
    Reconstruct(reconstruct::Args),
    /// Response latency per connection and epoch from a capture of the
    /// client→server direction alone (Pirate); with --db, the server time.
    Latency(latency::Args),
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
        Command::Synth(s) => synth::run(s),
        Command::Reconstruct(r) => reconstruct::run(r),
        Command::Latency(l) => latency::run(l),
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
    use intpath_plot::heatmap::{render_outlined, HeatmapKind, HeatmapRequest};
    use intpath_store::query::{Metric, Stat, TimeRange};
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
    let topo = Topology::load(&d.topo).with_context(|| format!("--topo {}", d.topo))?;
    let dg = diagnose(Request {
        plan,
        format: d.trace_format,
        host_map,
        strict: d.strict,
        window,
        ..Request::new(d.traces, d.db, topo)
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
