//! `intpath diagnose synth`: place the app, pick fault targets, play the
//! requests, write traces, telemetry, topology, plan and truth.

use super::app::App;
use super::fabric::{Bursts, Fabric};
use super::faults::{FaultKind, FaultSpec};
use super::otlp_out;
use super::sim::{HostFault, ServiceFault, Silence, Sim};
use super::targets::{calls_per_host, downlink, link_id, target, used_links};
use super::world::World;
use intpath_core::topo::Topology;
use intpath_diagnose::path::Resolver;
use intpath_planner::{plan, PlanOptions};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("{0}")]
    Setup(String),
    #[error("{0}: cannot write: {1}")]
    Write(PathBuf, std::io::Error),
    #[error("planning: {0}")]
    Plan(#[from] intpath_planner::PlanError),
    #[error("plan: {0}")]
    PlanFile(#[from] intpath_core::plan::PlanError),
    #[error(transparent)]
    Store(#[from] intpath_store::StoreError),
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct Config {
    pub topo: Topology,
    pub app: App,
    /// Workers, work spread and host noise under the app.
    pub world: World,
    pub faults: Vec<FaultSpec>,
    pub seed: u64,
    pub requests: usize,
    /// Requests per second.
    pub rate: f64,
    /// INT probes per second per plan path.
    pub probe_rate: f64,
    pub out: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthFault {
    /// `link`, `loss`, `service`, `host` or `decoy`.
    pub kind: String,
    /// `s1:1->s5`, `profile` or `h3`.
    pub name: String,
    pub amount: f64,
    pub share: f64,
    /// When a lasting fault (service, silent, delay) began, in seconds after
    /// the first request; the others come and go or last all run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onset_s: Option<f64>,
}

/// What a fault did to one RPC edge (keyed by its server span id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthEdge {
    /// The fault component that made it slow: `service`, `network`, `loss`,
    /// `host`, `downstream` (a call below it), or `ok`.
    pub label: String,
    /// Queueing over each crossed link's median, forward plus reverse.
    pub fabric_excess_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    pub faults: Vec<TruthFault>,
    pub app: App,
    #[serde(default)]
    pub world: World,
    pub seed: u64,
    pub requests: usize,
    pub placement: BTreeMap<String, String>,
    /// Host clock minus true time.
    pub clock_offsets_ns: BTreeMap<String, i64>,
    pub edges: BTreeMap<String, TruthEdge>,
}

impl<'de> Deserialize<'de> for App {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Start of synthetic time: fixed, so runs are reproducible.
pub const T0_NS: i64 = 1_750_000_000_000_000_000;
/// The first request, half a second in: the probes run before it.
const FIRST_REQUEST_NS: i64 = T0_NS + 500_000_000;

/// Generates everything into `cfg.out` and returns the truth.
pub async fn generate(cfg: &Config) -> Result<Truth, SynthError> {
    let topo = &cfg.topo;
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let services = cfg.app.services();
    if topo.hosts().len() < 2 {
        return Err(SynthError::Setup(format!(
            "{}: needs at least 2 hosts",
            topo.origin()
        )));
    }
    let mut hosts: Vec<u16> = (0..topo.hosts().len() as u16).collect();
    hosts.shuffle(&mut rng);
    let placement: HashMap<&'static str, u16> = services
        .iter()
        .enumerate()
        .map(|(i, s)| (*s, hosts[i % hosts.len()]))
        .collect();
    let arrivals = (cfg.requests as f64 / cfg.rate * 1e9) as i64;
    let duration = arrivals + 2_000_000_000;
    let mut fabric = Fabric::new(topo, T0_NS, duration, &mut rng);
    let used = used_links(cfg.app, topo, &fabric.index, &placement, &mut rng);

    let mut truth_faults = Vec::new();
    let mut host_fault = vec![None; topo.hosts().len()];
    let mut service_fault = HashMap::new();
    let mut silence = HashMap::new();
    for f in &cfg.faults {
        let phase = rng.gen_range(0..Bursts::PERIOD_NS);
        let bursts = Bursts::thirds(arrivals, phase);
        let mut name = target(
            f,
            topo,
            &fabric.index,
            &used,
            services,
            &placement,
            &mut rng,
        )?;
        // A lasting fault begins at a moment (30-60 % into the run unless
        // its spec says when), as a deploy, a failing disk or a reroute
        // does; one present from the first span on would be the service's
        // or link's nature, with nothing in the run to compare it to.
        let at = f
            .onset
            .unwrap_or(0.3 + 0.3 * phase as f64 / Bursts::PERIOD_NS as f64);
        let onset = T0_NS + (duration as f64 * at) as i64;
        match f.kind {
            FaultKind::Service => {
                service_fault.insert(
                    name.clone(),
                    ServiceFault {
                        extra_ns: f.amount * 1e6,
                        share: f.share,
                        from_ns: onset,
                    },
                );
            }
            FaultKind::Silent => {
                let timeout_ns = (f.amount * 1e6) as i64;
                let share = f.share;
                let from_ns = onset;
                silence.insert(
                    name.clone(),
                    Silence {
                        timeout_ns,
                        share,
                        from_ns,
                    },
                );
            }
            FaultKind::Link | FaultKind::Decoy => {
                let l = link_id(&fabric.index, topo, &name)?;
                let b = if f.kind == FaultKind::Decoy {
                    Bursts {
                        on_ns: i64::MAX,
                        period_ns: i64::MAX,
                        phase_ns: 0,
                    }
                } else {
                    bursts
                };
                fabric.congest(l, (f.amount * 1e3) as f32, b, &mut rng);
            }
            FaultKind::Incast => {
                let l = downlink(&fabric.index, &name)?;
                let b = Bursts {
                    period_ns: 200_000_000,
                    on_ns: 25_000_000,
                    phase_ns: rng.gen_range(0..200_000_000),
                };
                fabric.congest(l, (f.amount * 1e3) as f32, b, &mut rng);
                name = fabric.index.name(l);
            }
            FaultKind::Loss => {
                fabric.loss[link_id(&fabric.index, topo, &name)? as usize] = f.amount
            }
            FaultKind::Delay => {
                let l = link_id(&fabric.index, topo, &name)?;
                fabric.delay(l, onset, (f.amount * 1e6) as i64);
            }
            FaultKind::Host => {
                let h = topo.hosts().iter().position(|h| h.name == name);
                let h =
                    h.ok_or_else(|| SynthError::Setup(format!("fault {name:?}: no such host")))?;
                host_fault[h] = Some(HostFault {
                    amount_ns: f.amount * 1e6,
                    bursts,
                });
            }
        }
        let kind = match f.kind {
            FaultKind::Service | FaultKind::Silent => "service",
            FaultKind::Link => "link",
            FaultKind::Loss => "loss",
            FaultKind::Host => "host",
            FaultKind::Decoy => "decoy",
            // An incast is a queue on one link, and a delay what a link
            // holds, named as link faults are.
            FaultKind::Incast | FaultKind::Delay => "link",
        };
        let lasting = matches!(
            f.kind,
            FaultKind::Service | FaultKind::Silent | FaultKind::Delay
        );
        truth_faults.push(TruthFault {
            kind: kind.into(),
            name,
            amount: f.amount,
            share: f.share,
            onset_s: lasting.then(|| (onset - FIRST_REQUEST_NS).max(0) as f64 / 1e9),
        });
    }

    let clock: Vec<i64> = topo
        .hosts()
        .iter()
        .map(|_| rng.gen_range(-2_000_000..=2_000_000))
        .collect();
    let mut sim = Sim::new(
        cfg.app,
        &fabric,
        Resolver::new(topo),
        placement.clone(),
        T0_NS,
        StdRng::seed_from_u64(cfg.seed ^ 0x5eed),
    );
    sim.clock_ns = clock.clone();
    sim.world = cfg.world;
    sim.duration_ns = duration;
    sim.host_calls = calls_per_host(cfg.app, topo.hosts().len(), &placement, cfg.seed);
    sim.host_fault = host_fault;
    sim.service_fault = service_fault;
    sim.silence = silence;
    let gaps =
        Exp::new(cfg.rate).map_err(|e| SynthError::Setup(format!("rate {}: {e}", cfg.rate)))?;
    let mut t = FIRST_REQUEST_NS;
    for i in 0..cfg.requests {
        sim.request(t);
        t += (gaps.sample(&mut rng) * 1e9) as i64;
        if (i + 1) % 10_000 == 0 {
            tracing::info!("synth: {} of {} requests", i + 1, cfg.requests);
        }
    }

    std::fs::create_dir_all(&cfg.out).map_err(|e| SynthError::Write(cfg.out.clone(), e))?;
    let write = |name: &str, text: &str| {
        let p = cfg.out.join(name);
        std::fs::write(&p, text).map_err(|e| SynthError::Write(p, e))
    };
    let host_ids: Vec<(String, std::net::Ipv4Addr)> = topo
        .hosts()
        .iter()
        .map(|h| (h.name.clone(), h.ip))
        .collect();
    let spans = match cfg.world.handler_spans {
        true => std::borrow::Cow::Owned(otlp_out::with_handler_spans(&sim.spans)),
        false => std::borrow::Cow::Borrowed(&sim.spans),
    };
    write(
        "traces.otlp.json",
        &otlp_out::document(&spans, &host_ids).to_string(),
    )?;
    write("topology.json", &topo.to_json())?;
    let plan = plan(
        topo,
        &PlanOptions {
            directed: true,
            ..PlanOptions::default()
        },
    )?;
    plan.save(&cfg.out.join("plan.json"))?;
    let db = cfg.out.join("telemetry.db");
    remove_db(&db).map_err(|e| SynthError::Write(db.clone(), e))?;
    let probes = fabric
        .write_probes(topo, &plan, &db, cfg.probe_rate, duration, &mut rng)
        .await?;
    tracing::info!(
        "synth: {} spans, {probes} probes on {} paths",
        sim.spans.len(),
        plan.paths.len()
    );

    let name = |h: u16| topo.hosts()[h as usize].name.clone();
    let truth = Truth {
        faults: truth_faults,
        app: cfg.app,
        world: cfg.world,
        seed: cfg.seed,
        requests: cfg.requests,
        placement: placement
            .iter()
            .map(|(s, h)| (s.to_string(), name(*h)))
            .collect(),
        clock_offsets_ns: clock
            .iter()
            .enumerate()
            .map(|(i, &c)| (name(i as u16), c))
            .collect(),
        edges: std::mem::take(&mut sim.truth),
    };
    write(
        "truth.json",
        &serde_json::to_string_pretty(&truth).unwrap_or_default(),
    )?;
    Ok(truth)
}

/// A fresh database: an old one (and its WAL) would add a second run.
fn remove_db(db: &Path) -> std::io::Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}
