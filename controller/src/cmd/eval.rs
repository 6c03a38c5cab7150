//! `intpath eval`: the INT-path paper's evaluation, regenerated; `intpath
//! eval diagnose`: the trace-diagnosis scenario matrix.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: Option<What>,
    /// Directory for the CSV files and PNG plots.
    #[arg(long, default_value = "docs/eval")]
    out: PathBuf,
    /// Full-size runs (minutes) instead of the quick defaults (seconds).
    #[arg(long)]
    full: bool,
    /// Random graphs per data point [default: 5, or 20 with --full].
    #[arg(long)]
    repeats: Option<usize>,
    /// Only these figures (comma-separated: fig7,fig8,fig9,fig10,fig12,fig13,fig16).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

#[derive(clap::Subcommand)]
enum What {
    /// Trace diagnosis: fault × intensity × load × seeds, against the
    /// `hottest` and `vote` baselines.
    Diagnose(DiagnoseArgs),
    /// Trace reconstruction without instrumentation: tw, wap5, fcfs by
    /// load; tw vs tw-int with a hidden service under congestion.
    Reconstruct(ReconstructArgs),
}

#[derive(clap::Args)]
struct ReconstructArgs {
    #[arg(long, default_value = "docs/eval/reconstruct")]
    out: PathBuf,
    /// Request rates (per second), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "500,2000,2500,3000")]
    loads: Vec<f64>,
    #[arg(long, default_value_t = 1000)]
    requests: usize,
}

fn run_reconstruct(r: ReconstructArgs) -> Result<()> {
    use intpath_diagnose::reconstruct::evaluate;
    let (rows, pearson) = evaluate::run(&evaluate::Config {
        out: r.out.clone(),
        loads: r.loads,
        requests: r.requests,
    })?;
    println!(
        "{:<13} {:>6} {:<7} {:>10} {:>7} {:>7} {:>13}",
        "setting", "load", "method", "end-to-end", "links", "spans", "s/1000 spans"
    );
    for row in &rows {
        println!(
            "{:<13} {:>6} {:<7} {:>9.1}% {:>6.1}% {:>7} {:>13.3}",
            row.setting,
            row.load,
            row.method,
            100.0 * row.end_to_end,
            100.0 * row.links,
            row.spans,
            1000.0 * row.seconds / row.spans.max(1) as f64
        );
    }
    match pearson {
        Some(p) => println!("tw confidence vs accuracy (per service and load): Pearson {p:.3}"),
        None => println!("tw confidence vs accuracy: undefined (constant)"),
    }
    println!(
        "wrote {} (and per service, per response-time decile: reconstruct-services.csv, reconstruct-deciles.csv)",
        r.out.join("reconstruct.csv").display()
    );
    Ok(())
}

#[derive(clap::Args)]
struct DiagnoseArgs {
    #[arg(long, default_value = "docs/eval/diagnose")]
    out: PathBuf,
    #[arg(long, default_value = "fattree:k=4")]
    topo: String,
    /// Seeds per scenario (odd seeds run HotelReservation, even SocialNetwork).
    #[arg(long, default_value_t = 4)]
    seeds: u64,
    /// Request rates (per second), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "100,300")]
    loads: Vec<f64>,
    #[arg(long, default_value_t = 1500)]
    requests: usize,
    /// Only these families (link, service, loss, host, decoy, double, incast).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

pub fn run(a: Args) -> Result<()> {
    if let Some(What::Reconstruct(r)) = a.what {
        return run_reconstruct(r);
    }
    if let Some(What::Diagnose(d)) = a.what {
        let cfg = intpath_diagnose::eval::Config {
            out: d.out,
            topo: intpath_core::topo::Topology::load(&d.topo)?,
            seeds: d.seeds,
            loads: d.loads,
            requests: d.requests,
            only: d.only,
        };
        let (rows, files) = intpath_diagnose::eval::run(&cfg)?;
        print!("{}", std::fs::read_to_string(cfg.out.join("summary.csv"))?);
        println!(
            "{} scored runs; wrote {} files to {}",
            rows.len(),
            files.len(),
            cfg.out.display()
        );
        return Ok(());
    }
    let cfg = intpath::eval::Config {
        out: a.out,
        full: a.full,
        repeats: a.repeats.unwrap_or(if a.full { 20 } else { 5 }),
        only: a.only,
    };
    let files = intpath::eval::run(&cfg)?;
    println!("wrote {} files to {}", files.len(), cfg.out.display());
    Ok(())
}
