//! The INT-path paper's evaluation, regenerated: one CSV and one PNG per
//! figure. Defaults finish in seconds; `full` runs the paper-sized sweeps.
//!
//! The paper's figures plan without a hop limit (its §IV–V); so do these,
//! except Fig. 16, which also shows the balanced planner under the default
//! MTU so the cost of the limit is visible.

use intpath_collector::table::csv_text;
use intpath_core::plot::{register_font, FontError, FONT_FAMILY};
use intpath_core::topo::{TopoError, Topology};
use intpath_planner::{plan, Algo, PlanError, PlanOptions};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

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
    #[error("{0}: cannot draw: {1}")]
    Draw(PathBuf, String),
    #[error(transparent)]
    Font(#[from] FontError),
    #[error(transparent)]
    Topo(#[from] TopoError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("unknown figure {0:?} (fig7, fig8, fig9, fig10, fig12, fig13, fig16)")]
    UnknownFigure(String),
}

/// One figure's data: an x column and named y columns.
pub struct Table {
    pub name: &'static str,
    pub title: String,
    pub x: &'static str,
    pub y: &'static str,
    pub columns: Vec<&'static str>,
    /// `(x, values in column order)`.
    pub rows: Vec<(f64, Vec<f64>)>,
}

type Figure = fn(&Config) -> Result<Vec<Table>, EvalError>;

const FIGURES: [(&str, Figure); 7] = [
    ("fig7", fig7),
    ("fig8", fig8),
    ("fig9", fig9),
    ("fig10", fig10),
    ("fig12", fig12),
    ("fig13", fig13),
    ("fig16", fig16),
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

impl Table {
    pub fn csv(&self) -> String {
        let header = std::iter::once(self.x)
            .chain(self.columns.iter().copied())
            .map(str::to_owned)
            .collect();
        let rows = self.rows.iter().map(|(x, ys)| {
            std::iter::once(x.to_string())
                .chain(ys.iter().map(|y| ((y * 1e4).round() / 1e4).to_string()))
                .collect()
        });
        csv_text(std::iter::once(header).chain(rows))
    }

    fn draw(&self, path: &Path) -> Result<(), EvalError> {
        let fail = |e: &dyn std::fmt::Display| EvalError::Draw(path.to_owned(), e.to_string());
        let xs: Vec<f64> = self.rows.iter().map(|r| r.0).collect();
        let (x0, x1) = bounds(xs.iter().copied());
        let (_, y1) = bounds(self.rows.iter().flat_map(|r| r.1.iter().copied()));
        let root = BitMapBackend::new(path, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, (FONT_FAMILY, 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d(x0..x1, 0.0..y1 * 1.08)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_desc(self.x)
            .y_desc(self.y)
            .label_style((FONT_FAMILY, 14))
            .draw()
            .map_err(|e| fail(&e))?;
        const COLOURS: [RGBColor; 6] = [
            RGBColor(31, 119, 180),
            RGBColor(214, 39, 40),
            RGBColor(44, 160, 44),
            RGBColor(148, 103, 189),
            RGBColor(255, 127, 14),
            RGBColor(23, 190, 207),
        ];
        for (i, name) in self.columns.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let points: Vec<(f64, f64)> = self.rows.iter().map(|r| (r.0, r.1[i])).collect();
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
                .map_err(|e| fail(&e))?
                .label(*name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 3, colour.filled())),
                )
                .map_err(|e| fail(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT_FAMILY, 14))
            .draw()
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))
    }
}

fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if lo > hi {
        (0.0, 1.0)
    } else if lo == hi {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo, hi)
    }
}

/// No hop limit: the paper's setting.
fn unlimited(algo: Algo) -> PlanOptions {
    PlanOptions {
        algo,
        max_hops: Some(usize::MAX),
        ..PlanOptions::default()
    }
}

/// Mean over `repeats` seeds of `f(topology)`.
fn averaged(
    c: &Config,
    spec: impl Fn(usize) -> String,
    f: impl Fn(&Topology) -> Result<Vec<f64>, EvalError>,
) -> Result<Vec<f64>, EvalError> {
    let mut sum: Vec<f64> = Vec::new();
    for seed in 1..=c.repeats.max(1) {
        let v = f(&Topology::load(&spec(seed))?)?;
        sum.resize(v.len(), 0.0);
        sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
    }
    Ok(sum
        .into_iter()
        .map(|s| s / c.repeats.max(1) as f64)
        .collect())
}

fn counts(t: &Topology) -> Result<Vec<f64>, EvalError> {
    let dfs = plan(t, &unlimited(Algo::Dfs))?;
    let euler = plan(t, &unlimited(Algo::Euler))?;
    Ok(vec![dfs.stats.paths as f64, euler.stats.paths as f64])
}

fn progress(fig: &str, i: usize, n: usize, what: &str) {
    tracing::info!("{fig}: {what} ({}/{n})", i + 1);
}

fn sizes(c: &Config) -> Vec<usize> {
    if c.full {
        (1..=20).map(|i| i * 50).collect()
    } else {
        (1..=10).map(|i| i * 10).collect()
    }
}

/// Fig. 7: path count of DFS and Euler on random graphs of growing size
/// (average degree 4).
fn fig7(c: &Config) -> Result<Vec<Table>, EvalError> {
    let ns = sizes(c);
    let mut rows = Vec::new();
    for (i, &n) in ns.iter().enumerate() {
        progress("fig7", i, ns.len(), &format!("n={n}"));
        let v = averaged(c, |s| format!("random:n={n},m={},seed={s}", 2 * n), counts)?;
        rows.push((n as f64, v));
    }
    Ok(vec![Table {
        name: "fig7-paths-vs-size",
        title: "Paths on random graphs (m = 2n)".into(),
        x: "switches",
        y: "paths",
        columns: vec!["dfs", "euler"],
        rows,
    }])
}

/// Fig. 8: path count at a fixed number of odd-degree switches (20).
fn fig8(c: &Config) -> Result<Vec<Table>, EvalError> {
    let ns: Vec<usize> = sizes(c).into_iter().filter(|&n| n >= 20).collect();
    let mut rows = Vec::new();
    for (i, &n) in ns.iter().enumerate() {
        progress("fig8", i, ns.len(), &format!("n={n}"));
        let v = averaged(
            c,
            |s| format!("random:n={n},m={},odd=20,seed={s}", 2 * n),
            counts,
        )?;
        rows.push((n as f64, v));
    }
    Ok(vec![Table {
        name: "fig8-paths-fixed-odd",
        title: "Paths with 20 odd-degree switches (m = 2n)".into(),
        x: "switches",
        y: "paths",
        columns: vec!["dfs", "euler"],
        rows,
    }])
}

/// Fig. 9: path count at a fixed switch count with more and more links.
fn fig9(c: &Config) -> Result<Vec<Table>, EvalError> {
    let n = if c.full { 100 } else { 50 };
    let ms: Vec<usize> = (2..=12).map(|i| i * n / 2).collect();
    let mut rows = Vec::new();
    for (i, &m) in ms.iter().enumerate() {
        progress("fig9", i, ms.len(), &format!("m={m}"));
        let v = averaged(c, |s| format!("random:n={n},m={m},seed={s}"), counts)?;
        rows.push((m as f64, v));
    }
    Ok(vec![Table {
        name: "fig9-paths-vs-links",
        title: format!("Paths on random graphs of {n} switches"),
        x: "links",
        y: "paths",
        columns: vec!["dfs", "euler"],
        rows,
    }])
}

/// Fig. 10: path-length variance and longest path: unbalanced Euler, the
/// paper's heuristic, our balanced planner, and the ideal ceil(E / k).
fn fig10(c: &Config) -> Result<Vec<Table>, EvalError> {
    let ns = sizes(c);
    let mut var = Vec::new();
    let mut max = Vec::new();
    for (i, &n) in ns.iter().enumerate() {
        progress("fig10", i, ns.len(), &format!("n={n}"));
        let v = averaged(
            c,
            |s| format!("random:n={n},m={},seed={s}", 2 * n),
            |t| {
                let mut out = Vec::new();
                let mut longest = Vec::new();
                for algo in [Algo::Euler, Algo::Paper, Algo::Balanced] {
                    let p = plan(t, &unlimited(algo))?;
                    out.push(p.stats.len_variance);
                    longest.push(p.stats.max_len as f64);
                }
                let e = t.switch_links().count();
                let k = plan(t, &unlimited(Algo::Euler))?.stats.paths.max(1);
                longest.push(e.div_ceil(k) as f64);
                out.extend(longest);
                Ok(out)
            },
        )?;
        var.push((n as f64, v[..3].to_vec()));
        max.push((n as f64, v[3..].to_vec()));
    }
    Ok(vec![
        Table {
            name: "fig10-length-variance",
            title: "Path length variance (m = 2n)".into(),
            x: "switches",
            y: "variance of path length",
            columns: vec!["euler", "paper", "balanced"],
            rows: var,
        },
        Table {
            name: "fig10-longest-path",
            title: "Longest path (m = 2n)".into(),
            x: "switches",
            y: "links in the longest path",
            columns: vec!["euler", "paper", "balanced", "ideal"],
            rows: max,
        },
    ])
}

/// Planning time, best of three.
fn time_ms(t: &Topology, algo: Algo) -> Result<f64, EvalError> {
    let mut best = f64::MAX;
    for _ in 0..3 {
        best = best.min(plan(t, &unlimited(algo))?.stats.plan_ms);
    }
    Ok(best)
}

fn times(t: &Topology) -> Result<Vec<f64>, EvalError> {
    [Algo::Dfs, Algo::Euler, Algo::Balanced]
        .into_iter()
        .map(|a| time_ms(t, a))
        .collect()
}

/// Fig. 12: planning time against size (average degree 10).
fn fig12(c: &Config) -> Result<Vec<Table>, EvalError> {
    let ms: Vec<usize> = if c.full {
        (1..=10).map(|i| i * 100_000).collect()
    } else {
        (1..=8).map(|i| i * 5_000).collect()
    };
    let mut rows = Vec::new();
    for (i, &m) in ms.iter().enumerate() {
        progress("fig12", i, ms.len(), &format!("m={m}"));
        let t = Topology::load(&format!("random:n={},m={m},seed=1", m / 5))?;
        rows.push((m as f64, times(&t)?));
    }
    Ok(vec![Table {
        name: "fig12-time-vs-size",
        title: "Planning time on random graphs (n = m/5)".into(),
        x: "links",
        y: "ms",
        columns: vec!["dfs", "euler", "balanced"],
        rows,
    }])
}

/// Fig. 13: planning time against the number of odd-degree switches.
fn fig13(c: &Config) -> Result<Vec<Table>, EvalError> {
    let n = if c.full { 100_000 } else { 5_000 };
    let odds: Vec<usize> = (0..=9).map(|i| i * n / 10 / 2 * 2).collect();
    let mut rows = Vec::new();
    for (i, &odd) in odds.iter().enumerate() {
        progress("fig13", i, odds.len(), &format!("odd={odd}"));
        let t = Topology::load(&format!("random:n={n},m={},odd={odd},seed=1", 3 * n))?;
        rows.push((odd as f64, times(&t)?));
    }
    Ok(vec![Table {
        name: "fig13-time-vs-odd",
        title: format!("Planning time, {n} switches, {} links", 3 * n),
        x: "odd-degree switches",
        y: "ms",
        columns: vec!["dfs", "euler", "balanced"],
        rows,
    }])
}

/// Fig. 16: data-centre fabrics. Path counts without a limit, and the
/// balanced planner under the default MTU with its lower bound.
fn fig16(c: &Config) -> Result<Vec<Table>, EvalError> {
    let fabric = |t: &Topology| -> Result<Vec<f64>, EvalError> {
        let mut v = counts(t)?;
        let b = plan(t, &PlanOptions::default())?;
        v.extend([b.stats.paths as f64, b.stats.lower_bound as f64]);
        Ok(v)
    };
    let ks: Vec<usize> = if c.full {
        (2..=24).map(|i| 2 * i).collect()
    } else {
        (2..=8).map(|i| 2 * i).collect()
    };
    let mut fat = Vec::new();
    for (i, &k) in ks.iter().enumerate() {
        progress("fig16", i, ks.len(), &format!("fattree k={k}"));
        fat.push((
            k as f64,
            fabric(&Topology::load(&format!("fattree:k={k}"))?)?,
        ));
    }
    let ls: Vec<usize> = if c.full {
        (1..=16).map(|i| 32 * i).collect()
    } else {
        (1..=8).map(|i| 8 * i).collect()
    };
    let mut leaf = Vec::new();
    for (i, &l) in ls.iter().enumerate() {
        progress("fig16", i, ls.len(), &format!("leafspine leaves={l}"));
        leaf.push((
            l as f64,
            fabric(&Topology::load(&format!(
                "leafspine:spines=3,leaves={l},hosts=1"
            ))?)?,
        ));
    }
    let columns = vec!["dfs", "euler", "balanced (MTU 1500)", "bound (MTU 1500)"];
    Ok(vec![
        Table {
            name: "fig16-fattree",
            title: "Paths in k-ary fat trees".into(),
            x: "k",
            y: "paths",
            columns: columns.clone(),
            rows: fat,
        },
        Table {
            name: "fig16-leafspine",
            title: "Paths in leaf-spine fabrics (3 spines)".into(),
            x: "leaves",
            y: "paths",
            columns,
            rows: leaf,
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn csv_has_a_header_and_values_rounded_to_four_decimals() {
        let t = Table {
            name: "t",
            title: String::new(),
            x: "n",
            y: "y",
            columns: vec!["euler", "dfs"],
            rows: vec![(10.0, vec![1.0, 2.123456]), (20.5, vec![3.0, 4.0])],
        };
        assert_eq!(t.csv(), "n,euler,dfs\n10,1,2.1235\n20.5,3,4\n");
    }
}
