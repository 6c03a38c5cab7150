//! `intpath eval`: the INT-path paper's evaluation, regenerated.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
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

pub fn run(a: Args) -> Result<()> {
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
