//! `intpath eval reconstruct`: accuracy by load for tw, wap5 and fcfs on
//! synthetic HotelReservation traces with parents stripped; the
//! MediaMicroservices-like app with 4-worker pools (requests reorder,
//! `compose-review` has five callers) at shares of its capacity; for each
//! app a black-box setting (one service hidden, its leaf's uplinks
//! congested: [`hidden`]) for tw against tw-int; the media app again with
//! each span's worker recorded as `thread.id` (`threads`: the same spans
//! and times, tw with that evidence); tw on the instrumented runs with
//! each fan-out that skips another's calls missing from the call graph
//! (`unseen …`: [`unseen`]); accuracy per calling and per called
//! service; confidence against accuracy; time per 1000 spans.
//!
//! The topology is a 2×2 leaf-spine with two hosts per leaf, so services
//! share hosts and every host's clock can be related to the others through
//! instrumented RPCs (with one service per host the hidden service's
//! callees would have no clock reference at all, for any method).

use super::unseen;
use crate::synth::{self, App, SynthError, World};
use intpath_core::topo::Topology;
use intpath_diagnose::reconstruct::accuracy::{by_decile, pearson, Score, ServiceScore};
use intpath_diagnose::reconstruct::request::{
    self, Graph, Method, Outcome, ReconstructError, Request, Telemetry,
};
use intpath_diagnose::{DiagnoseError, Options, Request as DiagRequest};
use std::path::{Path, PathBuf};

pub const TOPO: &str = "leafspine:spines=2,leaves=2,hosts=2";
/// With seed 2 on [`TOPO`], both apps' hidden services ([`hidden`]) run on
/// h2 behind leaf s3; these are s3's two uplinks, which the hidden
/// service's calls and answers cross. (Synth places an app's services in
/// turn on a shuffle of the hosts drawn from the seed alone, and `search`
/// and `rating` are second and sixth in their lists: the same host of four.)
const CONGESTED: [&str; 2] = ["link:s3:3->s1:3", "link:s3:4->s2:3"];
const SEED: u64 = 2;

/// The service an app's black-box setting hides, if it has one.
///
/// HotelReservation hides `search`, the one service below `frontend` that
/// makes calls (`geo` and `rate`, in parallel). The media app hides
/// `rating`, one of `compose-review`'s five callers: the one whose upload
/// most often arrives last and so makes `compose-review` store the review,
/// and the one retried. Hidden,
/// its uploads are seen only from `compose-review`'s side, where they queue
/// with the other four callers', so the many-caller service's calls are
/// matched through a hidden caller, the case where per-caller call graphs
/// have the least to go on. (`compose-review` itself is not hidden: its
/// callers' views, where the calls into it are decided, would be
/// untouched, and it runs on another leaf than the congested one.)
pub fn hidden(app: App) -> Option<&'static str> {
    match app {
        App::Hotel => Some("search"),
        App::Media => Some("rating"),
        App::Social => None,
    }
}

pub struct Config {
    pub out: PathBuf,
    /// HotelReservation's request rates (per second).
    pub loads: Vec<f64>,
    /// The media app's loads, as shares of its capacity.
    pub media_shares: Vec<f64>,
    pub requests: usize,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub app: App,
    /// `instrumented`, `blackbox`, `threads`, or `unseen` and the variant
    /// taken out of the learned call graph ([`unseen`]).
    pub setting: String,
    pub load: f64,
    /// The load over the app's capacity.
    pub rho: f64,
    pub method: &'static str,
    pub end_to_end: f64,
    pub links: f64,
    pub spans: usize,
    pub seconds: f64,
    /// Accuracy of the calls each service makes.
    pub services: Vec<ServiceScore>,
    /// Accuracy of the calls into each service.
    pub callees: Vec<ServiceScore>,
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

/// What one run of an app measures.
struct Setting {
    name: &'static str,
    faults: &'static [&'static str],
    methods: &'static [Method],
    hide: Option<&'static str>,
    /// Spans record the worker that ran them as `thread.id`.
    thread_ids: bool,
}

/// The apps measured and the worlds they run in: HotelReservation in the
/// original one (one FIFO worker per instance), media with thread pools.
fn world(app: App) -> World {
    match app {
        App::Media => World::pools(),
        _ => World::default(),
    }
}

async fn workload(
    topo: &Topology,
    dir: &Path,
    (app, world): (App, World),
    (rate, requests, seed): (f64, usize, u64),
    faults: &[&str],
) -> Result<(), EvalError> {
    synth::generate(&synth::Config {
        topo: topo.clone(),
        app,
        world,
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
/// per service, load and app, all instrumented).
pub async fn run(c: &Config) -> Result<(Vec<Row>, Option<f64>), EvalError> {
    let topo = Topology::load(TOPO).map_err(|e| EvalError::Topo(TOPO.into(), e.to_string()))?;
    let mut rows = Vec::new();
    let (mut conf, mut acc) = (Vec::new(), Vec::new());
    let hotel_cap = App::Hotel.capacity(1, App::Hotel.work("profile").sigma);
    let w = World::pools();
    let media_cap = App::Media.capacity(w.workers, w.work_sigma.unwrap_or(0.25));
    let plan = c.loads.iter().map(|&l| (App::Hotel, l, hotel_cap)).chain(
        c.media_shares
            .iter()
            .map(|&s| (App::Media, (s * media_cap).round(), media_cap)),
    );
    let mut trained: Vec<(App, Vec<intpath_diagnose::spans::Span>)> = Vec::new();
    for (app, load, cap) in plan {
        let train = match trained.iter().find(|t| t.0 == app) {
            Some(t) => t.1.clone(),
            None => {
                let dir = c.out.join(format!("train-{}", app.name()));
                workload(&topo, &dir, (app, world(app)), (100.0, 300, 1), &[]).await?;
                let spans = request::read_spans(&dir.join("traces.otlp.json"))?;
                trained.push((app, spans.clone()));
                spans
            }
        };
        let instrumented = Setting {
            name: "instrumented",
            faults: &[],
            methods: &[Method::Tw, Method::Wap5, Method::Fcfs],
            hide: None,
            thread_ids: false,
        };
        let blackbox = hidden(app).map(|h| Setting {
            name: "blackbox",
            faults: &CONGESTED,
            methods: &[Method::Tw, Method::TwInt],
            hide: Some(h),
            thread_ids: false,
        });
        // The pools' runs again with their workers' thread ids: the same
        // spans at the same times (recording them draws nothing).
        let threads = (app == App::Media).then_some(Setting {
            name: "threads",
            methods: &[Method::Tw],
            thread_ids: true,
            ..instrumented
        });
        for setting in [Some(instrumented), blackbox, threads]
            .into_iter()
            .flatten()
        {
            let Setting {
                name: setting,
                faults,
                methods,
                hide,
                thread_ids,
            } = setting;
            let dir = c.out.join(match app {
                App::Hotel => format!("{setting}-{load}"),
                _ => format!("{}-{setting}-{load}", app.name()),
            });
            let world = World {
                thread_ids,
                ..world(app)
            };
            let rate = (load, c.requests, SEED);
            workload(&topo, &dir, (app, world), rate, faults).await?;
            let traces = dir.join("traces.otlp.json");
            let spans = request::read_spans(&traces)?;
            for &method in methods {
                let telemetry = match hide {
                    Some(_) => Some(Telemetry {
                        diagnosis: diagnosis(&diag_request(&dir, &traces)).await?,
                    }),
                    None => None,
                };
                let graph = Graph::Train(train.clone());
                let (out, seconds) = timed(&spans, graph, method, hide, telemetry)?;
                // The learned graph without each fan-out that skips
                // another's calls: what a shorter training capture misses.
                let unseen = match (setting, method) {
                    ("instrumented", Method::Tw) => unseen::without_subsets(&out.graph),
                    _ => Vec::new(),
                };
                let Some(s) = out.score else { continue };
                if setting == "instrumented" && method == Method::Tw {
                    for p in &s.per_service {
                        conf.push(p.confidence);
                        acc.push(p.accuracy);
                    }
                }
                let row = |setting: String, s: Score, seconds: f64| {
                    tracing::info!(
                        "{} {setting} {load}/s {}: {:.3}",
                        app.name(),
                        name(method),
                        s.end_to_end
                    );
                    Row {
                        app,
                        setting,
                        load,
                        rho: load / cap,
                        method: name(method),
                        end_to_end: s.end_to_end,
                        links: s.links,
                        spans: spans.len(),
                        seconds,
                        services: s.per_service,
                        callees: s.per_callee,
                        deciles: by_decile(&s.per_trace),
                    }
                };
                rows.push(row(setting.to_owned(), s, seconds));
                for (what, graph) in unseen {
                    let (out, seconds) = timed(&spans, Graph::Given(graph), method, None, None)?;
                    if let Some(s) = out.score {
                        rows.push(row(format!("unseen {what}"), s, seconds));
                    }
                }
            }
        }
    }
    let key = |r: &Row| format!("{},{},{},{:.3}", r.app.name(), r.setting, r.load, r.rho);
    let csv: String =
        std::iter::once("app,setting,load,rho,method,end_to_end,links,spans,seconds\n".to_owned())
            .chain(rows.iter().map(|r| {
                format!(
                    "{},{},{:.4},{:.4},{},{:.3}\n",
                    key(r),
                    r.method,
                    r.end_to_end,
                    r.links,
                    r.spans,
                    r.seconds
                )
            }))
            .collect();
    write(&c.out.join("reconstruct.csv"), csv)?;
    let services: String = std::iter::once(
        "app,setting,load,rho,method,side,service,calls,accuracy,confidence\n".to_owned(),
    )
    .chain(rows.iter().flat_map(|r| {
        let sides = [("caller", &r.services), ("callee", &r.callees)];
        sides.into_iter().flat_map(move |(side, scores)| {
            scores.iter().map(move |s| {
                format!(
                    "{},{},{side},{},{},{:.4},{:.4}\n",
                    key(r),
                    r.method,
                    s.service,
                    s.calls,
                    s.accuracy,
                    s.confidence
                )
            })
        })
    }))
    .collect();
    write(&c.out.join("reconstruct-services.csv"), services)?;
    let deciles: String =
        std::iter::once("app,setting,load,rho,method,decile,end_to_end\n".to_owned())
            .chain(rows.iter().flat_map(|r| {
                r.deciles
                    .iter()
                    .enumerate()
                    .map(move |(d, a)| format!("{},{},{},{:.4}\n", key(r), r.method, d + 1, a))
            }))
            .collect();
    write(&c.out.join("reconstruct-deciles.csv"), deciles)?;
    Ok((rows, pearson(&conf, &acc)))
}

/// `spans` reconstructed by `method` with `graph`, parents stripped and
/// scored, `hide` hidden; and how long it took, s.
fn timed(
    spans: &[intpath_diagnose::spans::Span],
    graph: Graph,
    method: Method,
    hide: Option<&str>,
    telemetry: Option<Telemetry>,
) -> Result<(Outcome, f64), EvalError> {
    let started = std::time::Instant::now();
    let out = request::run(Request {
        spans: spans.to_vec(),
        graph,
        method,
        blackbox: hide.into_iter().map(String::from).collect(),
        strip_parents: true,
        threads: true,
        telemetry,
        rounds: 3,
    })?;
    Ok((out, started.elapsed().as_secs_f64()))
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
