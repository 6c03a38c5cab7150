//! `intpath eval diagnose`: the scenario matrix (fault × intensity × load ×
//! seed), each scenario generated, diagnosed and scored with our ranking and
//! the two baselines side by side; CSV and PNG out. Its `pirate` part
//! (`--only pirate` alone) is [`super::pirate`].

use super::families::{Family, FAMILIES, LEVELS, NO_FAULT};
use crate::score::{confusion, score, Score};
use crate::synth::{self, generate, App, Config as SynthConfig, SynthError};
use intpath_core::topo::Topology;
use intpath_diagnose::culprits::Method;
use intpath_diagnose::{analyze, Baseline, DiagnoseError, Options, Request};
use intpath_plot::chart::{self, BarChart, Bars, ChartError};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Synth(#[from] SynthError),
    #[error(transparent)]
    Diagnose(#[from] DiagnoseError),
    #[error("{0}: {1}")]
    Write(PathBuf, std::io::Error),
    #[error(transparent)]
    Chart(#[from] ChartError),
}

/// The matrix to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub out: PathBuf,
    pub topo: Topology,
    pub seeds: u64,
    /// Requests per second of each load level.
    pub loads: Vec<f64>,
    pub requests: usize,
    /// Scenario families to run (empty: all).
    pub only: Vec<String>,
}

const METHODS: [Method; 3] = [Method::Diagnose, Method::Hottest, Method::Vote];

/// One scored run.
#[derive(Debug, Clone)]
pub struct Row {
    pub family: &'static str,
    pub intensity: &'static str,
    pub load: f64,
    pub seed: u64,
    pub method: Method,
    pub score: Score,
    /// Culprits the method named (a run without a fault should name none).
    pub named: usize,
    pub edges_per_s: f64,
    /// What `intpath diagnose synth --seed … --app …` takes to generate
    /// this run again (with its family, intensity and load).
    pub synth_seed: u64,
    pub app: App,
}

/// Runs the matrix; returns the rows and the files written.
pub async fn run(c: &Config) -> Result<(Vec<Row>, Vec<PathBuf>), EvalError> {
    std::fs::create_dir_all(&c.out).map_err(|e| EvalError::Write(c.out.clone(), e))?;
    let work = tempdir(&c.out)?;
    let mut rows = Vec::new();
    let mut mistakes: Mistakes = BTreeMap::new();
    let families: Vec<&Family> = FAMILIES
        .iter()
        .filter(|f| c.only.is_empty() || c.only.iter().any(|o| o == f.name))
        .collect();
    let total = families.len() * LEVELS.len() * c.loads.len() * c.seeds as usize;
    let mut done = 0;
    for fam in families {
        let family = fam.name;
        for level in LEVELS {
            for &load in &c.loads {
                for seed in 1..=c.seeds {
                    let cfg = SynthConfig {
                        topo: c.topo.clone(),
                        app: fam.app(seed),
                        world: (fam.world)(),
                        faults: fam.faults(level).unwrap_or_default(),
                        seed: seed * 1000 + done as u64,
                        requests: c.requests,
                        rate: load,
                        probe_rate: 50.0,
                        out: work.clone(),
                    };
                    let truth = generate(&cfg).await?;
                    let baseline = match fam.baseline {
                        true => Some(healthy(&cfg).await?),
                        false => None,
                    };
                    let started = std::time::Instant::now();
                    let req = Request {
                        baseline,
                        ..synth::request(&work)
                    };
                    let inputs = intpath_diagnose::load(&req).await?;
                    let d = analyze(&inputs, &Options::default())?;
                    for ((label, verdict), n) in confusion(&d, &truth) {
                        *mistakes.entry((family, label, verdict)).or_insert(0) += n;
                    }
                    for method in METHODS {
                        let ranking = d.culprits(method);
                        let elapsed = started.elapsed().as_secs_f64();
                        let score = score(&d, &ranking, &truth);
                        let missed = match level {
                            NO_FAULT => !ranking.is_empty(),
                            _ => !(score.best_rank == Some(1) && score.all_in_top3),
                        };
                        if method == Method::Diagnose && missed {
                            let top: Vec<String> = ranking
                                .iter()
                                .take(4)
                                .map(|c| format!("{} {} {:.1}", c.kind, c.name, c.score))
                                .collect();
                            tracing::warn!(
                                "eval diagnose: {family} {level} load {load} seed {seed}: truth {:?}, ranked {top:?}",
                                truth.faults.iter().map(|f| format!("{} {}", f.kind, f.name)).collect::<Vec<_>>()
                            );
                        }
                        rows.push(Row {
                            family,
                            intensity: level,
                            load,
                            seed,
                            method,
                            score,
                            named: ranking.len(),
                            edges_per_s: d.edges.len() as f64 / elapsed,
                            synth_seed: cfg.seed,
                            app: cfg.app,
                        });
                    }
                    done += 1;
                    tracing::info!("eval diagnose: {done} of {total} scenarios ({family} {level}, load {load}, seed {seed})");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    let mut files = write(c, &rows, &mistakes)?;
    if c.only.is_empty() || c.only.iter().any(|o| o == "pirate") {
        let p = super::pirate::write(&c.out, &super::pirate::run(c.seeds))
            .map_err(|e| EvalError::Write(c.out.join("pirate.csv"), e))?;
        files.push(p);
    }
    Ok((rows, files))
}

/// Added to a run's seed for the healthy run it is compared with.
const HEALTHY_SEED: u64 = 500_000;

/// A run of `cfg`'s world and app without its faults (another seed), in a
/// directory of its own under `cfg.out`: the healthy period a family with
/// a baseline is diagnosed against.
async fn healthy(cfg: &SynthConfig) -> Result<Baseline, EvalError> {
    let out = cfg.out.join("healthy");
    let h = SynthConfig {
        faults: Vec::new(),
        seed: cfg.seed + HEALTHY_SEED,
        out: out.clone(),
        ..cfg.clone()
    };
    generate(&h).await?;
    Ok(Baseline::File(out.join("traces.otlp.json")))
}

fn tempdir(out: &Path) -> Result<PathBuf, EvalError> {
    let p = out.join(".work");
    std::fs::create_dir_all(&p).map_err(|e| EvalError::Write(p.clone(), e))?;
    Ok(p)
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::Diagnose => "diagnose",
        Method::Hottest => "hottest",
        Method::Vote => "vote",
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{:.1}", x))
}

/// Aggregates per family and method over the runs with a fault: top-1,
/// top-3, both-in-top-3, decoy above, attribution accuracy,
/// network-vs-service accuracy; and over the runs without one, the share
/// that named nobody (NaN where there were none).
pub fn summary(rows: &[Row]) -> Vec<(String, Method, [f64; 7])> {
    let mut keys: Vec<(&str, Method)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.family, r.method)) {
            keys.push((r.family, r.method));
        }
    }
    keys.into_iter()
        .map(|(f, m)| {
            let (quiet, rs): (Vec<&Row>, Vec<&Row>) = rows
                .iter()
                .filter(|r| r.family == f && r.method == m)
                .partition(|r| r.intensity == NO_FAULT);
            let n = rs.len().max(1) as f64;
            let frac =
                |p: &dyn Fn(&Score) -> bool| rs.iter().filter(|r| p(&r.score)).count() as f64 / n;
            let (lab, cor, sl, sc) = rs.iter().fold((0, 0, 0, 0), |a, r| {
                (
                    a.0 + r.score.labelled,
                    a.1 + r.score.correct,
                    a.2 + r.score.side_labelled,
                    a.3 + r.score.side_correct,
                )
            });
            let ratio = |a: usize, b: usize| {
                if b == 0 {
                    f64::NAN
                } else {
                    a as f64 / b as f64
                }
            };
            (
                f.to_owned(),
                m,
                [
                    frac(&|s| s.best_rank == Some(1)),
                    frac(&|s| s.best_rank.is_some_and(|r| r <= 3)),
                    frac(&|s| s.all_in_top3),
                    frac(&|s| s.decoy_above),
                    ratio(cor, lab),
                    ratio(sc, sl),
                    ratio(quiet.iter().filter(|r| r.named == 0).count(), quiet.len()),
                ],
            )
        })
        .collect()
}

/// Slow labelled edges per (family, true label, verdict), over all runs.
type Mistakes = BTreeMap<(&'static str, String, &'static str), usize>;

fn write(c: &Config, rows: &[Row], mistakes: &Mistakes) -> Result<Vec<PathBuf>, EvalError> {
    let mut runs = String::from("family,intensity,load,seed,method,best_rank,all_in_top3,decoy_above,labelled,correct,side_labelled,side_correct,fabric_err_us,fabric_rel_err,clock_err_us,named,edges_per_s,synth_seed,app\n");
    for r in rows {
        let s = &r.score;
        let _ = writeln!(
            runs,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.0},{},{}",
            r.family,
            r.intensity,
            r.load,
            r.seed,
            method_name(r.method),
            s.best_rank.map_or(String::new(), |x| x.to_string()),
            s.all_in_top3,
            s.decoy_above,
            s.labelled,
            s.correct,
            s.side_labelled,
            s.side_correct,
            opt(s.fabric_err_us),
            s.fabric_rel_err
                .map_or(String::new(), |x| format!("{x:.3}")),
            opt(s.clock_err_us),
            r.named,
            r.edges_per_s,
            r.synth_seed,
            r.app.name()
        );
    }
    let sum = summary(rows);
    let mut text = String::from(
        "family,method,top1,top3,all_in_top3,decoy_above,attribution,network_vs_service,no_fault_names_nobody\n",
    );
    for (f, m, v) in &sum {
        let _ = writeln!(
            text,
            "{f},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3}",
            method_name(*m),
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            v[5],
            v[6]
        );
    }
    let w = |name: &str, body: &str| {
        let p = c.out.join(name);
        std::fs::write(&p, body)
            .map_err(|e| EvalError::Write(p.clone(), e))
            .map(|_| p)
    };
    let png = c.out.join("top1.png");
    draw(&png, &sum)?;
    let mut conf = String::from("family,truth,verdict,edges\n");
    for ((f, label, verdict), n) in mistakes {
        let _ = writeln!(conf, "{f},{label},{verdict},{n}");
    }
    Ok(vec![
        w("runs.csv", &runs)?,
        w("summary.csv", &text)?,
        w("confusion.csv", &conf)?,
        png,
    ])
}

/// Grouped bars: top-1 rate per scenario family, one bar per method.
fn draw(path: &Path, sum: &[(String, Method, [f64; 7])]) -> Result<(), EvalError> {
    let mut families: Vec<String> = Vec::new();
    for (f, _, _) in sum {
        if !families.contains(f) {
            families.push(f.clone());
        }
    }
    let series: Vec<Bars> = METHODS
        .iter()
        .map(|m| Bars {
            name: method_name(*m).to_owned(),
            values: families
                .iter()
                .map(|f| {
                    sum.iter()
                        .find(|(ff, mm, _)| ff == f && mm == m)
                        .map(|(_, _, v)| v[0])
                })
                .collect(),
        })
        .collect();
    let chart = BarChart {
        title: "culprit top-1: diagnose vs baselines".into(),
        y_desc: "top-1 rate".into(),
        groups: families,
        series,
        y_max: 1.0,
    };
    Ok(chart::bars(path, &chart)?)
}
