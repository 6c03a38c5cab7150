//! `intpath eval reconstruct`: accuracy by load for tw, wap5 and fcfs on
//! synthetic HotelReservation traces with parents stripped; the black-box
//! setting (`search` hidden, its leaf's uplinks congested) for tw against
//! tw-int; confidence against accuracy; time per 1000 spans.
//!
//! The topology is a 2×2 leaf-spine with two hosts per leaf, so services
//! share hosts and every host's clock can be related to the others through
//! instrumented RPCs (with one service per host the hidden service's
//! callees would have no clock reference at all, for any method).

use crate::synth::{self, App, SynthError};
use intpath_core::topo::Topology;
use intpath_diagnose::reconstruct::accuracy::{by_decile, pearson, ServiceScore};
use intpath_diagnose::reconstruct::request::{
    self, Graph, Method, ReconstructError, Request, Telemetry,
};
use intpath_diagnose::{DiagnoseError, Options, Request as DiagRequest};
use std::path::{Path, PathBuf};

pub const TOPO: &str = "leafspine:spines=2,leaves=2,hosts=2";
/// With seed 2 on [`TOPO`], `search` runs on h2 behind leaf s3; these are
/// s3's two uplinks, which its calls to geo and its answers cross.
const CONGESTED: [&str; 2] = ["link:s3:3->s1:3", "link:s3:4->s2:3"];
const SEED: u64 = 2;

pub struct Config {
    pub out: PathBuf,
    pub loads: Vec<f64>,
    pub requests: usize,
}

#[derive(Debug, Clone)]
pub struct Row {
    /// `instrumented` or `blackbox`.
    pub setting: &'static str,
    pub load: f64,
    pub method: &'static str,
    pub end_to_end: f64,
    pub links: f64,
    pub spans: usize,
    pub seconds: f64,
    /// Accuracy of the calls each service makes.
    pub services: Vec<ServiceScore>,
    /// End-to-end accuracy per tenth of response times, fastest first.
    pub deciles: Vec<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Synth(#[from] SynthError),
    #[error(transparent)]
    Reconstruct(#[from] ReconstructError),
    #[error(transparent)]
    Diagnose(#[from] DiagnoseError),
    #[error("{0}: {1}")]
    Topo(String, String),
    #[error("{0}: cannot write: {1}")]
    Write(PathBuf, std::io::Error),
}

async fn workload(
    topo: &Topology,
    dir: &Path,
    (rate, requests, seed): (f64, usize, u64),
    faults: &[&str],
) -> Result<(), EvalError> {
    synth::generate(&synth::Config {
        topo: topo.clone(),
        app: App::Hotel,
        world: synth::World::default(),
        faults: faults.iter().filter_map(|f| f.parse().ok()).collect(),
        seed,
        requests,
        rate,
        probe_rate: 50.0,
        out: dir.to_owned(),
    })
    .await?;
    Ok(())
}

const NAMES: [(Method, &str); 4] = [
    (Method::Tw, "tw"),
    (Method::TwInt, "tw-int"),
    (Method::Wap5, "wap5"),
    (Method::Fcfs, "fcfs"),
];

fn name(m: Method) -> &'static str {
    NAMES.iter().find(|n| n.0 == m).map_or("?", |n| n.1)
}

/// Runs everything; returns the rows and the Pearson correlation of tw's
/// per-service mean confidence with its per-service accuracy (one point
/// per service and load).
pub async fn run(c: &Config) -> Result<(Vec<Row>, Option<f64>), EvalError> {
    let topo = Topology::load(TOPO).map_err(|e| EvalError::Topo(TOPO.into(), e.to_string()))?;
    let train_dir = c.out.join("train");
    workload(&topo, &train_dir, (100.0, 300, 1), &[]).await?;
    let train = request::read_spans(&train_dir.join("traces.otlp.json"))?;
    let mut rows = Vec::new();
    let (mut conf, mut acc) = (Vec::new(), Vec::new());
    for &load in &c.loads {
        for (setting, faults, methods, hidden) in [
            (
                "instrumented",
                &[][..],
                &[Method::Tw, Method::Wap5, Method::Fcfs][..],
                None,
            ),
            (
                "blackbox",
                &CONGESTED[..],
                &[Method::Tw, Method::TwInt][..],
                Some("search"),
            ),
        ] {
            let dir = c.out.join(format!("{setting}-{load}"));
            workload(&topo, &dir, (load, c.requests, SEED), faults).await?;
            let traces = dir.join("traces.otlp.json");
            let spans = request::read_spans(&traces)?;
            for &method in methods {
                let telemetry = match hidden {
                    Some(_) => Some(Telemetry {
                        diagnosis: diagnosis(&diag_request(&dir, &traces)).await?,
                    }),
                    None => None,
                };
                let started = std::time::Instant::now();
                let out = request::run(Request {
                    spans: spans.clone(),
                    graph: Graph::Train(train.clone()),
                    method,
                    blackbox: hidden.into_iter().map(String::from).collect(),
                    strip_parents: true,
                    telemetry,
                    rounds: 3,
                })?;
                let seconds = started.elapsed().as_secs_f64();
                let Some(s) = out.score else { continue };
                if setting == "instrumented" && method == Method::Tw {
                    for p in &s.per_service {
                        conf.push(p.confidence);
                        acc.push(p.accuracy);
                    }
                }
                tracing::info!("{setting} {load}/s {}: {:.3}", name(method), s.end_to_end);
                rows.push(Row {
                    setting,
                    load,
                    method: name(method),
                    end_to_end: s.end_to_end,
                    links: s.links,
                    spans: spans.len(),
                    seconds,
                    services: s.per_service.clone(),
                    deciles: by_decile(&s.per_trace),
                });
            }
        }
    }
    let csv: String =
        std::iter::once("setting,load,method,end_to_end,links,spans,seconds\n".to_owned())
            .chain(rows.iter().map(|r| {
                format!(
                    "{},{},{},{:.4},{:.4},{},{:.3}\n",
                    r.setting, r.load, r.method, r.end_to_end, r.links, r.spans, r.seconds
                )
            }))
            .collect();
    write(&c.out.join("reconstruct.csv"), csv)?;
    let services: String =
        std::iter::once("setting,load,method,service,calls,accuracy,confidence\n".to_owned())
            .chain(rows.iter().flat_map(|r| {
                r.services.iter().map(move |s| {
                    format!(
                        "{},{},{},{},{},{:.4},{:.4}\n",
                        r.setting, r.load, r.method, s.service, s.calls, s.accuracy, s.confidence
                    )
                })
            }))
            .collect();
    write(&c.out.join("reconstruct-services.csv"), services)?;
    let deciles: String = std::iter::once("setting,load,method,decile,end_to_end\n".to_owned())
        .chain(rows.iter().flat_map(|r| {
            r.deciles.iter().enumerate().map(move |(d, a)| {
                format!("{},{},{},{},{:.4}\n", r.setting, r.load, r.method, d + 1, a)
            })
        }))
        .collect();
    write(&c.out.join("reconstruct-deciles.csv"), deciles)?;
    Ok((rows, pearson(&conf, &acc)))
}

fn write(p: &Path, text: String) -> Result<(), EvalError> {
    std::fs::write(p, text).map_err(|e| EvalError::Write(p.to_owned(), e))
}

/// The diagnosis (with INT) that bounds the hidden service's times.
async fn diagnosis(req: &DiagRequest) -> Result<intpath_diagnose::Diagnosis, EvalError> {
    let inputs = intpath_diagnose::load(req).await?;
    Ok(intpath_diagnose::analyze(&inputs, &Options::default())?)
}

fn diag_request(dir: &Path, traces: &Path) -> DiagRequest {
    DiagRequest {
        traces: Some(traces.to_owned()),
        ..synth::request(dir)
    }
}
