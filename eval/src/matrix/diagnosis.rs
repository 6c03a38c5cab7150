//! `intpath eval diagnose`: the scenario matrix (fault × intensity × load ×
//! seed), each scenario generated, diagnosed and scored with our ranking and
//! the two baselines side by side; CSV and PNG out. Its `pirate` part
//! (`--only pirate` alone) is [`super::pirate`].

use crate::score::{confusion, score, Score};
use crate::synth::{self, generate, App, Config as SynthConfig, FaultSpec, SynthError, World};
use intpath_core::topo::Topology;
use intpath_diagnose::culprits::Method;
use intpath_diagnose::{analyze, DiagnoseError, Options};
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

/// A scenario family: fault specs at a low and a high intensity, the world
/// under the app, and the apps its seeds take in turn.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub name: &'static str,
    pub levels: [&'static [&'static str]; 2],
    pub world: fn() -> World,
    pub apps: &'static [App],
}

const CLASSIC: &[App] = &[App::Hotel, App::Social];
const ALL_APPS: &[App] = &[App::Hotel, App::Social, App::Media];

/// Thread pools, plus per-host scheduling jitter that grows with the calls
/// a host makes.
fn jittery() -> World {
    World {
        jitter_us: 25.0,
        ..World::pools()
    }
}

/// Thread pools on a machine whose load swells and ebbs (every host).
fn loaded() -> World {
    World {
        load_us: 300.0,
        ..World::pools()
    }
}

/// The jittery world whose client spans name their callees
/// (`server.address`, `server.port`), as HTTP and gRPC client
/// instrumentations record them.
fn jittery_named() -> World {
    World {
        peer_addresses: true,
        ..jittery()
    }
}

/// The families, in the order the matrix runs them: the first seven in the
/// original world (their seeds and draws as before the others existed),
/// then the worlds that reorder requests and add host noise.
pub const FAMILIES: [Family; 13] = [
    classic("link", [&["link:auto:2"], &["link:auto:8"]]),
    classic(
        "service",
        [&["service:auto:2:0.2"], &["service:auto:10:0.3"]],
    ),
    classic("loss", [&["loss:auto:0.02"], &["loss:auto:0.05"]]),
    classic("host", [&["host:auto:2"], &["host:auto:8"]]),
    classic(
        "decoy",
        [
            &["link:auto:2", "decoy:auto:5"],
            &["link:auto:5", "decoy:auto:20"],
        ],
    ),
    classic(
        "double",
        [
            &["link:auto:3", "service:auto:3:0.3"],
            &["link:auto:8", "service:auto:10:0.3"],
        ],
    ),
    classic("incast", [&["incast:auto:3"], &["incast:auto:8"]]),
    Family {
        name: "pools",
        levels: [&["service:auto:2:0.2"], &["service:auto:10:0.3"]],
        world: World::pools,
        apps: ALL_APPS,
    },
    Family {
        name: "jitter",
        levels: [&["service:auto:2:0.2"], &["service:auto:10:0.3"]],
        world: jittery,
        apps: ALL_APPS,
    },
    Family {
        name: "loaded",
        levels: [&["link:auto:2"], &["link:auto:8"]],
        world: loaded,
        apps: ALL_APPS,
    },
    Family {
        name: "media",
        levels: [&["link:auto:2"], &["service:auto:10:0.3"]],
        world: World::pools,
        apps: &[App::Media],
    },
    // A link that delays without queueing, among hosts as noisy as the
    // jitter family's: only INT's stamps tell it from its callee's host.
    Family {
        name: "delay",
        levels: [&["delay:auto:2"], &["delay:auto:8"]],
        world: jittery,
        apps: ALL_APPS,
    },
    // A service that stops answering, from a moment on: a twentieth of the
    // calls to it (callers give up after 10 ms), or all (after 50 ms). It
    // records nothing for them, so its callers' waits are all that is left.
    Family {
        name: "silent",
        levels: [&["silent:auto:10:0.05"], &["silent:auto:50:1"]],
        world: jittery_named,
        apps: ALL_APPS,
    },
];

const fn classic(name: &'static str, levels: [&'static [&'static str]; 2]) -> Family {
    Family {
        name,
        levels,
        world: World::default,
        apps: CLASSIC,
    }
}

impl Family {
    pub fn by_name(name: &str) -> Option<&'static Family> {
        FAMILIES.iter().find(|f| f.name == name)
    }

    /// The app the matrix's `seed` (1, 2, …) runs: the family's apps in turn.
    pub fn app(&self, seed: u64) -> App {
        self.apps[(seed.max(1) - 1) as usize % self.apps.len()]
    }

    /// The fault specs of `intensity` (`low` or `high`; `none`: the
    /// family's world without a fault, e.g. to train on).
    pub fn faults(&self, intensity: &str) -> Option<Vec<FaultSpec>> {
        if intensity == NO_FAULT {
            return Some(Vec::new());
        }
        let level = ["low", "high"].iter().position(|l| *l == intensity)?;
        Some(
            self.levels[level]
                .iter()
                .filter_map(|s| s.parse().ok())
                .collect(),
        )
    }
}

const METHODS: [Method; 3] = [Method::Diagnose, Method::Hottest, Method::Vote];

/// Each family runs at both fault intensities and once without its fault,
/// in its own world: the run that must name nobody.
const LEVELS: [&str; 3] = ["low", "high", NO_FAULT];
/// The intensity of a family's run without its fault.
const NO_FAULT: &str = "none";

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
                    let started = std::time::Instant::now();
                    let inputs = intpath_diagnose::load(&synth::request(&work)).await?;
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
