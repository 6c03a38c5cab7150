//! `intpath diagnose latency`: per-connection response latency from a
//! capture of the client→server direction (Pirate), and with INT the
//! server's own share of it.

use super::Output;
use anyhow::{bail, Context, Result};
use intpath_core::topo::Topology;
use intpath_diagnose::hosts::Hosts;
use intpath_diagnose::latency::fabric::{queueing, FabricSource};
use intpath_diagnose::latency::{analyse, Analysis, Basis, ClientFilter, Config, Row};
use intpath_store::Db;
use serde_json::json;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Capture file (pcap; link type Ethernet, Linux cooked v1/v2, raw IP
    /// or BSD loopback). Only the client→server segments are used.
    #[arg(long)]
    pcap: PathBuf,
    /// Epoch length, seconds: one estimate per connection per epoch.
    #[arg(long, default_value_t = 1.0)]
    epoch: f64,
    /// Most gap modes kept per connection.
    #[arg(long, default_value_t = 10)]
    modes: usize,
    /// How near (µs) a gap must be to a mode to join it.
    #[arg(long, default_value_t = 20.0)]
    epsilon_us: f64,
    /// Gap modes at least this long (ms) are retransmission timeouts.
    #[arg(long, default_value_t = 200.0)]
    rto_ms: f64,
    /// Gaps at least this long (ms) are idling and not counted.
    #[arg(long, default_value_t = 1000.0)]
    idle_ms: f64,
    /// Only connections from this client: IP or IP:PORT.
    #[arg(long)]
    client: Option<ClientFilter>,
    /// The collector's telemetry database (SQLite file or `postgres://`
    /// URL): also print the server time, the estimate less the INT-measured
    /// queueing of both directions of the host pair in that epoch.
    #[arg(long, requires = "topo")]
    db: Option<Db>,
    /// Topology file or generator (with --db).
    #[arg(long, requires = "db")]
    topo: Option<String>,
    /// A file holding a JSON object: IP or host name → topology host
    /// (with --db).
    #[arg(long, requires = "db", value_name = "FILE")]
    host_map: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    output: Output,
}

fn duration(flag: &str, secs: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(secs).with_context(|| format!("{flag}: {secs} is not a duration"))
}

pub fn run(a: Args) -> Result<()> {
    if a.modes == 0 {
        bail!("--modes must be at least 1");
    }
    let cfg = Config {
        epoch: duration("--epoch", a.epoch)?,
        modes: a.modes,
        epsilon: duration("--epsilon-us", a.epsilon_us / 1e6)?,
        rto: duration("--rto-ms", a.rto_ms / 1e3)?,
        idle: duration("--idle-ms", a.idle_ms / 1e3)?,
        client: a.client,
    };
    if cfg.epoch.is_zero() {
        bail!("--epoch must be above 0");
    }
    let analysis = analyse(&a.pcap, &cfg)?;
    let int = match (&a.db, &a.topo) {
        (Some(db), Some(topo)) => {
            let topo = Topology::load(topo).with_context(|| format!("--topo {topo}"))?;
            let host_map = match &a.host_map {
                Some(p) => Hosts::load_map(p)?,
                None => HashMap::new(),
            };
            let src = FabricSource {
                db: db.clone(),
                topo: &topo,
                host_map,
            };
            Some(super::super::runtime()?.block_on(queueing(&src, &analysis.rows, cfg.epoch))?)
        }
        _ => None,
    };
    eprintln!("{}", summary(&a.pcap, &analysis));
    let text = match a.output {
        Output::Table => table(&analysis.rows, int.as_deref()),
        Output::Json => json_rows(&analysis.rows, int.as_deref()),
        Output::Csv => csv(&analysis.rows, int.as_deref()),
    };
    super::super::emit(None, &text)
}

/// One line on what the file held, for stderr.
fn summary(path: &std::path::Path, a: &Analysis) -> String {
    let mut s = format!(
        "{}: {} records, {} TCP/UDP segments, {} connections, {} connection-epochs",
        path.display(),
        a.records,
        a.segments,
        a.connections,
        a.rows.len()
    );
    if !a.skipped.is_empty() {
        let why: Vec<String> = a.skipped.iter().map(|(r, n)| format!("{n} {r}")).collect();
        let _ = write!(s, "; skipped: {}", why.join(", "));
    }
    s
}

/// The values every format prints for one row.
struct Fields {
    client: String,
    server: String,
    transport: &'static str,
    epoch_s: String,
    estimate_us: Option<f64>,
    /// `modes` (Pirate's mode sum) or `window=W` (W × the mean gap).
    basis: String,
    batches: u64,
    gaps: u64,
    modes: usize,
    discarded: u64,
    idle: u64,
    pure_acks: u64,
    int_us: Option<f64>,
    server_us: Option<f64>,
}

fn fields(r: &Row, int_ns: Option<f64>) -> Fields {
    let e = r.result.estimate;
    let estimate_us = e.map(|e| e.latency_ns / 1e3);
    let int_us = int_ns.map(|n| n / 1e3);
    Fields {
        client: r.client.to_string(),
        server: r.server.to_string(),
        transport: r.transport.name(),
        epoch_s: format!(
            "{}.{:03}",
            r.epoch_start_ns.div_euclid(1_000_000_000),
            r.epoch_start_ns.rem_euclid(1_000_000_000) / 1_000_000
        ),
        estimate_us,
        basis: match e.map(|e| e.basis) {
            Some(Basis::ModeSum) => "modes".into(),
            Some(Basis::Window(w)) => format!("window={w}"),
            None => "-".into(),
        },
        batches: e.map_or(0, |e| e.batches),
        gaps: r.result.counted,
        modes: e.map_or(0, |e| e.modes),
        discarded: r.result.discarded,
        idle: r.result.idle,
        pure_acks: r.result.pure_acks,
        int_us,
        server_us: estimate_us.zip(int_us).map(|(e, i)| e - i),
    }
}

fn each<'a>(rows: &'a [Row], int: Option<&'a [Option<f64>]>) -> impl Iterator<Item = Fields> + 'a {
    rows.iter()
        .enumerate()
        .map(move |(i, r)| fields(r, int.and_then(|v| v.get(i).copied().flatten())))
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.1}"))
}

fn table(rows: &[Row], int: Option<&[Option<f64>]>) -> String {
    let mut out = format!(
        "{:<22} {:<22} {:<4} {:<14} {:>12} {:<10} {:>7} {:>7} {:>5} {:>9}",
        "client",
        "server",
        "",
        "epoch",
        "estimate_us",
        "basis",
        "batches",
        "gaps",
        "modes",
        "discarded"
    );
    if int.is_some() {
        let _ = write!(out, " {:>10} {:>10}", "int_us", "server_us");
    }
    out.push('\n');
    for f in each(rows, int) {
        let _ = write!(
            out,
            "{:<22} {:<22} {:<4} {:<14} {:>12} {:<10} {:>7} {:>7} {:>5} {:>9}",
            f.client,
            f.server,
            f.transport,
            f.epoch_s,
            num(f.estimate_us),
            f.basis,
            f.batches,
            f.gaps,
            f.modes,
            f.discarded
        );
        if int.is_some() {
            let _ = write!(out, " {:>10} {:>10}", num(f.int_us), num(f.server_us));
        }
        out.push('\n');
    }
    out
}

fn json_rows(rows: &[Row], int: Option<&[Option<f64>]>) -> String {
    let v: Vec<serde_json::Value> = each(rows, int)
        .map(|f| {
            let mut o = json!({
                "client": f.client,
                "server": f.server,
                "transport": f.transport,
                "epoch_start_s": f.epoch_s.parse::<f64>().unwrap_or_default(),
                "estimate_us": f.estimate_us,
                "basis": f.basis,
                "batches": f.batches,
                "gaps": f.gaps,
                "modes": f.modes,
                "discarded": f.discarded,
                "idle": f.idle,
                "pure_acks": f.pure_acks,
            });
            if int.is_some() {
                o["int_us"] = json!(f.int_us);
                o["server_us"] = json!(f.server_us);
            }
            o
        })
        .collect();
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

fn csv(rows: &[Row], int: Option<&[Option<f64>]>) -> String {
    let blank = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.3}"));
    let mut out = String::from(
        "client,server,transport,epoch_start_s,estimate_us,basis,batches,gaps,modes,discarded,idle,pure_acks",
    );
    if int.is_some() {
        out.push_str(",int_us,server_us");
    }
    out.push('\n');
    for f in each(rows, int) {
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            f.client,
            f.server,
            f.transport,
            f.epoch_s,
            blank(f.estimate_us),
            f.basis,
            f.batches,
            f.gaps,
            f.modes,
            f.discarded,
            f.idle,
            f.pure_acks
        );
        if int.is_some() {
            let _ = write!(out, ",{},{}", blank(f.int_us), blank(f.server_us));
        }
        out.push('\n');
    }
    out
}
