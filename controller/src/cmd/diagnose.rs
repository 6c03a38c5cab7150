//! `intpath diagnose`: per-request network evidence for distributed traces.

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use intpath_collector::store::Db;
use intpath_core::link::{DirLink, LinkName};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_diagnose::attribution::Options;
use intpath_diagnose::critical::critical_paths;
use intpath_diagnose::culprits::{rank, Culprit, Method};
use intpath_diagnose::hosts::HostResolver;
use intpath_diagnose::path::HostPath;
use intpath_diagnose::spans::Format;
use intpath_diagnose::synth::{self, App, FaultSpec};
use intpath_diagnose::{diagnose, report, Diagnosis, Request};
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
}

#[derive(clap::Args)]
struct SynthArgs {
    /// Topology file or generator (fattree:k=4, leafspine:…).
    #[arg(long)]
    topo: String,
    #[arg(long, default_value = "hotel")]
    app: App,
    /// KIND:TARGET[:AMOUNT[:SHARE]]: service:profile:5:0.3, link:s1:1->s5:5,
    /// loss:auto:0.05, host:h3:3, decoy:auto:8. TARGET may be auto.
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
            let db = c.diag.db.clone();
            let dg = load(c.diag)?;
            let paths: Vec<Option<&HostPath>> = dg.paths.iter().map(Some).collect();
            let hosts = dg.host_names();
            let ranking = rank(&dg.ranking_inputs(&paths, &hosts), c.method);
            if let Some(dir) = &c.heatmap {
                outlined_heatmaps(&dg, &ranking, db, dir)?;
            }
            let text = match format {
                Output::Json => report::culprits_json(&dg, &ranking),
                Output::Csv => report::culprits_csv(&ranking),
                Output::Table => report::table(&dg, limit) + &report::summary(&dg, &ranking, c.top),
            };
            super::emit(None, &text)
        }
    }
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
    let links: Vec<DirLink> = ranking
        .iter()
        .take(3)
        .filter(|c| matches!(c.kind, "link" | "loss") && c.score > 0.0)
        .filter_map(|c| LinkName::parse(&c.name).and_then(|n| n.resolve(&dg.topo)))
        .collect();
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

fn load(d: DiagArgs) -> Result<Diagnosis> {
    let plan = match &d.plan {
        Some(p) => Some(Plan::load(p)?),
        None => None,
    };
    let host_map = match &d.host_map {
        Some(p) => HostResolver::load_map(p)?,
        None => HashMap::new(),
    };
    let dg = diagnose(Request {
        traces: d.traces,
        db: d.db,
        topo: Topology::load(&d.topo).with_context(|| format!("--topo {}", d.topo))?,
        plan,
        format: d.trace_format,
        host_map,
        options: Options::default(),
        strict: d.strict,
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
