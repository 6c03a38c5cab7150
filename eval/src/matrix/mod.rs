//! The matrices of `intpath-diagnose`, run and summarised: culprit
//! diagnosis against its baselines, and trace reconstruction by method and
//! load.

pub mod diagnosis;
pub mod families;
pub mod pirate;
pub mod reconstruction;
pub mod unseen;

use crate::synth::App;
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

/// Runs the reconstruction matrix; returns one line per app, setting and
/// load with the methods side by side (end-to-end accuracy, tw's time per
/// 1000 spans), then each called service's accuracy by method, tw's
/// confidence against its accuracy and where the tables went.
pub async fn reconstruct(c: &reconstruction::Config) -> Result<String, TracesError> {
    const METHODS: [&str; 4] = ["tw", "tw-int", "wap5", "fcfs"];
    let (rows, pearson) = reconstruction::run(c).await?;
    let mut keys: Vec<(App, &str, f64, f64)> = Vec::new();
    for r in &rows {
        if !keys.contains(&(r.app, r.setting.as_str(), r.load, r.rho)) {
            keys.push((r.app, &r.setting, r.load, r.rho));
        }
    }
    let of = |k: &(App, &str, f64, f64), m: &str| {
        rows.iter()
            .find(|r| (r.app, r.setting.as_str(), r.load, r.rho) == *k && r.method == m)
    };
    // Wide enough for the longest setting (`unseen` names its variant).
    let w = keys.iter().map(|k| k.1.len()).max().unwrap_or(0).max(13);
    let mut out = format!(
        "{:<6} {:<w$} {:>6} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>13}\n",
        "app", "setting", "load", "rho", "spans", "tw", "tw-int", "wap5", "fcfs", "tw s/1000 sp"
    );
    let pct = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{:.1}%", 100.0 * x));
    for k in &keys {
        let tw = of(k, "tw");
        let _ = write!(
            out,
            "{:<6} {:<w$} {:>6} {:>5.2} {:>7}",
            k.0.name(),
            k.1,
            k.2,
            k.3,
            tw.map_or(0, |r| r.spans)
        );
        for m in METHODS {
            let _ = write!(out, " {:>7}", pct(of(k, m).map(|r| r.end_to_end)));
        }
        let _ = writeln!(
            out,
            " {:>13.3}",
            tw.map_or(0.0, |r| 1000.0 * r.seconds / r.spans.max(1) as f64)
        );
    }
    out.push_str("calls into each service (tw / tw-int / wap5 / fcfs):\n");
    for k in &keys {
        let Some(tw) = of(k, "tw") else { continue };
        for callee in &tw.callees {
            let _ = write!(
                out,
                "  {:<6} {:<w$} {:>6} {:<16} {:>6}",
                k.0.name(),
                k.1,
                k.2,
                callee.service,
                callee.calls
            );
            for m in METHODS {
                let acc = of(k, m).and_then(|r| {
                    r.callees
                        .iter()
                        .find(|s| s.service == callee.service)
                        .map(|s| s.accuracy)
                });
                let _ = write!(out, " {:>7}", pct(acc));
            }
            out.push('\n');
        }
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
        "wrote {} (and per calling and called service, per response-time decile: reconstruct-services.csv, reconstruct-deciles.csv)",
        c.out.join("reconstruct.csv").display()
    );
    Ok(out)
}
