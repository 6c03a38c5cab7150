//! The matrices of `intpath-diagnose`, run and summarised: culprit
//! diagnosis against its baselines, and trace reconstruction by method and
//! load.

pub mod diagnosis;
pub mod pirate;
pub mod reconstruction;

use std::fmt::Write;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TracesError {
    #[error(transparent)]
    Diagnosis(#[from] diagnosis::EvalError),
    #[error(transparent)]
    Reconstruction(#[from] reconstruction::EvalError),
    #[error("{}: cannot read", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
}

/// Runs the diagnosis matrix (fault × intensity × load × seeds); returns
/// its summary table and what was written.
pub async fn diagnose(c: &diagnosis::Config) -> Result<String, TracesError> {
    let (rows, files) = diagnosis::run(c).await?;
    let path = c.out.join("summary.csv");
    let mut out = std::fs::read_to_string(&path).map_err(|e| TracesError::Read(path, e))?;
    let _ = writeln!(
        out,
        "{} scored runs; wrote {} files to {}",
        rows.len(),
        files.len(),
        c.out.display()
    );
    Ok(out)
}

/// Runs the reconstruction matrix; returns one line per setting, load and
/// method (accuracy, time per 1000 spans), then tw's confidence against its
/// accuracy and where the tables went.
pub async fn reconstruct(c: &reconstruction::Config) -> Result<String, TracesError> {
    let (rows, pearson) = reconstruction::run(c).await?;
    let mut out = format!(
        "{:<13} {:>6} {:<7} {:>10} {:>7} {:>7} {:>13}\n",
        "setting", "load", "method", "end-to-end", "links", "spans", "s/1000 spans"
    );
    for row in &rows {
        let _ = writeln!(
            out,
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
        Some(p) => {
            let _ = writeln!(
                out,
                "tw confidence vs accuracy (per service and load): Pearson {p:.3}"
            );
        }
        None => out.push_str("tw confidence vs accuracy: undefined (constant)\n"),
    }
    let _ = writeln!(
        out,
        "wrote {} (and per service, per response-time decile: reconstruct-services.csv, reconstruct-deciles.csv)",
        c.out.join("reconstruct.csv").display()
    );
    Ok(out)
}
