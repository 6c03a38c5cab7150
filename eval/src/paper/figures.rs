//! The paper's figures, each a function from the run's [`Config`] to the
//! tables it plots.

use super::{Config, EvalError, Table};
use intpath_core::topo::Topology;
use intpath_planner::{plan, Algo, PlanOptions};

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
pub(super) fn fig7(c: &Config) -> Result<Vec<Table>, EvalError> {
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
pub(super) fn fig8(c: &Config) -> Result<Vec<Table>, EvalError> {
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
pub(super) fn fig9(c: &Config) -> Result<Vec<Table>, EvalError> {
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
pub(super) fn fig10(c: &Config) -> Result<Vec<Table>, EvalError> {
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
pub(super) fn fig12(c: &Config) -> Result<Vec<Table>, EvalError> {
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
pub(super) fn fig13(c: &Config) -> Result<Vec<Table>, EvalError> {
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
pub(super) fn fig16(c: &Config) -> Result<Vec<Table>, EvalError> {
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
