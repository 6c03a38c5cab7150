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
    /// load; tw vs tw-int with a hidden service under congestion; tw with
    /// a fan-out missing from the call graph.
    Reconstruct(ReconstructArgs),
}

#[derive(clap::Args)]
struct ReconstructArgs {
    #[arg(long, default_value = "docs/eval/reconstruct")]
    out: PathBuf,
    /// HotelReservation's request rates (per second), comma-separated
    /// (its capacity, one FIFO worker per service: about 2150 req/s).
    #[arg(long, value_delimiter = ',', default_value = "500,2000,2500,3000")]
    loads: Vec<f64>,
    /// The media app's loads (4-worker pools), as shares of its capacity,
    /// comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0.25,0.5,0.8,1.0")]
    media_shares: Vec<f64>,
    #[arg(long, default_value_t = 1000)]
    requests: usize,
}

#[derive(clap::Args)]
struct DiagnoseArgs {
    #[arg(long, default_value = "docs/eval/diagnose")]
    out: PathBuf,
    #[arg(long, default_value = "fattree:k=4")]
    topo: String,
    /// Seeds per scenario (each family's apps in turn: hotel, social and,
    /// for the families that have it, media).
    #[arg(long, default_value_t = 4)]
    seeds: u64,
    /// Request rates (per second), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "100,300")]
    loads: Vec<f64>,
    #[arg(long, default_value_t = 1500)]
    requests: usize,
    /// Only these families (link, service, loss, host, decoy, double,
    /// incast, pools, jitter, loaded, media, delay, silent, early, whole).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

pub fn run(a: Args) -> Result<()> {
    match a.what {
        Some(What::Reconstruct(r)) => {
            let cfg = intpath_eval::matrix::reconstruction::Config {
                out: r.out,
                loads: r.loads,
                media_shares: r.media_shares,
                requests: r.requests,
            };
            let table = super::runtime()?.block_on(intpath_eval::matrix::reconstruct(&cfg))?;
            super::emit(None, &table)?;
        }
        Some(What::Diagnose(d)) => {
            let cfg = intpath_eval::matrix::diagnosis::Config {
                out: d.out,
                topo: intpath_core::topo::Topology::load(&d.topo)?,
                seeds: d.seeds,
                loads: d.loads,
                requests: d.requests,
                only: d.only,
            };
            let table = super::runtime()?.block_on(intpath_eval::matrix::diagnose(&cfg))?;
            super::emit(None, &table)?;
        }
        None => {
            let cfg = intpath_eval::paper::Config {
                out: a.out,
                full: a.full,
                repeats: a.repeats.unwrap_or(if a.full { 20 } else { 5 }),
                only: a.only,
            };
            let files = intpath_eval::paper::run(&cfg)?;
            println!("wrote {} files to {}", files.len(), cfg.out.display());
        }
    }
    Ok(())
}
