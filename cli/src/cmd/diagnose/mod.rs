//! `intpath diagnose`: per-request network evidence for distributed traces.

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_diagnose::critical::critical_paths;
use intpath_diagnose::culprits::{blamed_links, Method};
use intpath_diagnose::export::Endpoint;
use intpath_diagnose::hosts::Hosts;
use intpath_diagnose::spans::Format;
use intpath_diagnose::{report, Baseline, DiagnoseError, Diagnosis, Options, Request, SpanWindow};
use intpath_plot::heatmap::culprit_heatmaps;
use intpath_store::{Db, RunId};
use std::collections::HashMap;
use std::path::PathBuf;

mod export;
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
pub(crate) struct DiagArgs {
    /// Spans: OTLP JSON, Jaeger JSON or Zipkin v2 JSON (one document or JSON
    /// Lines). Default: the spans the collector's OTLP receiver stored in --db.
    #[arg(long)]
    traces: Option<PathBuf>,
    /// The collector's telemetry database: a SQLite file or a `postgres://`
    /// URL. Its INT (the run the spans go with) localises links; without a
    /// run the diagnosis is from the traces alone.
    #[arg(long)]
    pub(crate) db: Option<Db>,
    /// Topology file or generator (default: the one the run recorded;
    /// refused when it is not that one). Without INT, optional: it only
    /// names the hosts.
    #[arg(long)]
    topo: Option<String>,
    /// The plan in force (default: the run's own; refused when it is not
    /// the one the run measured).
    #[arg(long)]
    plan: Option<PathBuf>,
    /// Span format (otlp, jaeger, zipkin, or console: the SDKs' console
    /// exporters), instead of detecting it from the content.
    #[arg(long)]
    trace_format: Option<Format>,
    /// A file holding a JSON object: IP, host name or service name → host,
    /// over what the spans' attributes say (`{"frontend": "h1"}`).
    #[arg(long, value_name = "FILE")]
    host_map: Option<PathBuf>,
    /// Diagnose from the traces alone, whatever INT the database holds.
    #[arg(long)]
    no_int: bool,
    /// Fail when any span or edge is rejected.
    #[arg(long)]
    strict: bool,
    /// Without --traces: diagnose the spans of this collector run (default:
    /// the newest run with probes, or every span if none has probes).
    #[arg(long, conflicts_with_all = ["since", "until", "all_spans"])]
    pub(crate) run: Option<RunId>,
    /// Without --traces: only spans that started at or after this Unix
    /// time, in seconds (instead of a run's window).
    #[arg(long, conflicts_with = "all_spans")]
    pub(crate) since: Option<f64>,
    /// Without --traces: only spans that started at or before this Unix
    /// time, in seconds.
    #[arg(long, conflicts_with = "all_spans")]
    pub(crate) until: Option<f64>,
    /// Without --traces: every stored span, whichever run it came with.
    #[arg(long)]
    pub(crate) all_spans: bool,
    #[arg(long, value_enum, default_value = "table")]
    format: Output,
    /// Rows of the table.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Send the diagnosed spans on to this OTLP/HTTP endpoint
    /// (`http://HOST:4318`, or its full `/v1/traces` URL) with the diagnosis
    /// as span attributes (`intpath.blame`, `intpath.network_ms`,
    /// `intpath.queueing_ms`, `intpath.culprit`, the links crossed) and an
    /// `intpath.network_evidence` event where the network explains a call.
    #[arg(long, value_name = "URL")]
    export_otlp: Option<Endpoint>,
}

#[derive(clap::Args)]
pub(crate) struct CulpritArgs {
    #[command(flatten)]
    pub(crate) diag: DiagArgs,
    /// diagnose (traces + INT), or one signal alone: hottest (INT only), vote (traces only).
    #[arg(long, default_value = "diagnose")]
    method: Method,
    /// Culprits in the summary.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Also draw the queueing-delay heatmaps (snapshot.png, timeline.png)
    /// into this directory, the top link culprits' cells outlined.
    #[arg(long)]
    heatmap: Option<PathBuf>,
    /// Spans of a period the application was healthy (any span format):
    /// services and stores are also compared with their calls there, so a
    /// fault present for the whole run is found.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["baseline_run", "baseline_since", "baseline_until"])]
    baseline: Option<PathBuf>,
    /// As --baseline, the spans --db holds of this collector run.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["baseline_since", "baseline_until"])]
    baseline_run: Option<RunId>,
    /// As --baseline, the spans --db holds that started at or after this
    /// Unix time, in seconds (with --baseline-until, before that).
    #[arg(long, value_name = "SECONDS")]
    baseline_since: Option<f64>,
    /// As --baseline, the spans --db holds that started at or before this
    /// Unix time, in seconds.
    #[arg(long, value_name = "SECONDS")]
    baseline_until: Option<f64>,
}

impl CulpritArgs {
    /// The healthy period the flags name, if any.
    fn baseline(&self) -> Option<Baseline> {
        let ns = |s: f64| (s * 1e9) as i64;
        match (
            &self.baseline,
            self.baseline_run,
            self.baseline_since,
            self.baseline_until,
        ) {
            (Some(file), ..) => Some(Baseline::File(file.clone())),
            (None, Some(run), ..) => Some(Baseline::Stored(SpanWindow::Run(run))),
            (None, None, None, None) => None,
            (None, None, since, until) => Some(Baseline::Stored(SpanWindow::Between(
                since.map_or(i64::MIN, ns),
                until.map_or(i64::MAX, ns),
            ))),
        }
    }
}

pub fn run(a: Args) -> Result<()> {
    match a.command {
        Command::Synth(s) => synth::run(s),
        Command::Reconstruct(r) => reconstruct::run(r),
        Command::Latency(l) => latency::run(l),
        Command::Rpcs(d) => {
            let (format, limit, export) = (d.format, d.limit, d.export_otlp.clone());
            let dg = diagnosed(&request(d)?, export.as_ref())?;
            let text = match format {
                Output::Json => report::rpcs_json(&dg),
                Output::Csv => report::rpcs_csv(&dg),
                Output::Table => report::table(&dg, limit) + &report::summary(&dg, &[], 0),
            };
            super::emit(None, &text)
        }
        Command::Traces(d) => {
            let (format, limit, export) = (d.format, d.limit, d.export_otlp.clone());
            let dg = diagnosed(&request(d)?, export.as_ref())?;
            let blames = critical_paths(&dg.edges, &dg.attr);
            let text = match format {
                Output::Json => report::traces_json(&dg, &blames),
                Output::Table | Output::Csv => report::traces_table(&dg, &blames, limit),
            };
            super::emit(None, &text)
        }
        Command::Culprits(c) => culprits(c),
    }
}

/// `intpath diagnose culprits` (also `intpath lab diagnose`).
pub(crate) fn culprits(c: CulpritArgs) -> Result<()> {
    let (format, limit) = (c.diag.format, c.diag.limit);
    let export = c.diag.export_otlp.clone();
    let req = Request {
        baseline: c.baseline(),
        ..request(c.diag)?
    };
    let dg = diagnosed(&req, export.as_ref())?;
    let ranking = dg.culprits(c.method);
    if let (Some(dir), Some(db), Some(topo)) = (&c.heatmap, &req.db, &dg.topo) {
        let links = blamed_links(&ranking, topo, 3);
        let files = super::runtime()?.block_on(culprit_heatmaps(db, dg.run, &links, dir))?;
        for f in files {
            eprintln!(
                "wrote {} ({} culprit links outlined)",
                f.display(),
                links.len()
            );
        }
    }
    let text = match format {
        Output::Json => report::culprits_json(&dg, &ranking, &dg.tested()),
        Output::Csv => report::culprits_csv(&ranking),
        Output::Table => report::table(&dg, limit) + &report::summary(&dg, &ranking, c.top),
    };
    super::emit(None, &text)
}

/// The diagnosis of `req`, each kind of span or edge rejected logged once
/// with its count and first example; when nothing was left, those rejects
/// printed as a table before the error.
/// Diagnoses `req` and, with `export`, sends the result on over OTLP.
fn diagnosed(req: &Request, export: Option<&Endpoint>) -> Result<Diagnosis> {
    match intpath_diagnose::run(req, &Options::default()) {
        Ok(dg) => {
            if let Some(url) = export {
                export::send(req, &dg, url)?;
            }
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
        Err(e) => {
            if let DiagnoseError::NoEdges { rejects, .. } = &e {
                eprint!("{}", report::rejects_table(rejects));
            }
            Err(e.into())
        }
    }
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

/// The diagnosis `d` asks for.
fn request(d: DiagArgs) -> Result<Request> {
    let plan = match &d.plan {
        Some(p) => Some(Plan::load(p)?),
        None => None,
    };
    let host_map = match &d.host_map {
        Some(p) => Hosts::load_map(p)?,
        None => HashMap::new(),
    };
    let topo = match &d.topo {
        Some(t) => Some(Topology::load(t).with_context(|| format!("--topo {t}"))?),
        None => None,
    };
    Ok(Request {
        window: span_window(&d),
        traces: d.traces,
        db: d.db,
        topo,
        plan,
        format: d.trace_format,
        host_map,
        no_int: d.no_int,
        strict: d.strict,
        baseline: None,
    })
}
