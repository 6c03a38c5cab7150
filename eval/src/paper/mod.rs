//! The INT-path paper's evaluation of probe path planning, regenerated:
//! one CSV and one PNG per figure. Defaults finish in seconds; `full` runs
//! the paper-sized sweeps.
//!
//! The paper's figures plan without a hop limit (its §IV–V); so do these,
//! except Fig. 16, which also shows the balanced planner under the default
//! MTU so the cost of the limit is visible.

mod figures;
mod table;

pub use table::Table;

use intpath_core::topo::TopoError;
use intpath_planner::PlanError;
use intpath_plot::chart::ChartError;
use intpath_plot::font::{register_font, FontError};
use std::path::PathBuf;

/// What to run and where the files go.
#[derive(Debug, Clone)]
pub struct Config {
    pub out: PathBuf,
    pub full: bool,
    /// Random graphs averaged per data point.
    pub repeats: usize,
    /// Figure names to run (`fig7` …); empty = all.
    pub only: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{0}: cannot write: {1}")]
    Write(PathBuf, std::io::Error),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error(transparent)]
    Font(#[from] FontError),
    #[error(transparent)]
    Topo(#[from] TopoError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("unknown figure {0:?} (fig7, fig8, fig9, fig10, fig12, fig13, fig16)")]
    UnknownFigure(String),
}

type Figure = fn(&Config) -> Result<Vec<Table>, EvalError>;

const FIGURES: [(&str, Figure); 7] = [
    ("fig7", figures::fig7),
    ("fig8", figures::fig8),
    ("fig9", figures::fig9),
    ("fig10", figures::fig10),
    ("fig12", figures::fig12),
    ("fig13", figures::fig13),
    ("fig16", figures::fig16),
];

/// Runs the selected figures; returns the files written.
pub fn run(c: &Config) -> Result<Vec<PathBuf>, EvalError> {
    if let Some(bad) = c.only.iter().find(|f| !FIGURES.iter().any(|(n, _)| n == f)) {
        return Err(EvalError::UnknownFigure(bad.clone()));
    }
    register_font()?;
    std::fs::create_dir_all(&c.out).map_err(|e| EvalError::Write(c.out.clone(), e))?;
    let mut files = Vec::new();
    for (name, figure) in FIGURES {
        if !c.only.is_empty() && !c.only.iter().any(|f| f == name) {
            continue;
        }
        tracing::info!("{name}: running");
        for t in figure(c)? {
            let csv = c.out.join(format!("{}.csv", t.name));
            std::fs::write(&csv, t.csv()).map_err(|e| EvalError::Write(csv.clone(), e))?;
            let png = c.out.join(format!("{}.png", t.name));
            t.draw(&png)?;
            tracing::info!("{name}: wrote {} and {}", csv.display(), png.display());
            files.extend([csv, png]);
        }
    }
    Ok(files)
}
