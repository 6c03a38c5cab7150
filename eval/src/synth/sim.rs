//! Requests played through the application and the fabric: every RPC's
//! client and server spans on their hosts' clocks, and what each fault did
//! to it.

use super::app::{App, Call};
use super::fabric::{Bursts, Fabric};
use super::otlp_out::{OutSpan, SpanKind};
use super::pool::Pool;
use super::run::TruthEdge;
use super::world::{load_level, lomax_ns, World};
use intpath_diagnose::path::{HostPath, Resolver};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};
use std::collections::{BTreeMap, HashMap};

/// A slow service: `extra_ns` more work on `share` of the requests it
/// receives from `from_ns` on.
#[derive(Debug, Clone, Copy)]
pub struct ServiceFault {
    pub extra_ns: f64,
    pub share: f64,
    pub from_ns: i64,
}

/// A service that stops answering: `share` of the calls to it from
/// `from_ns` on get no answer, and their callers give up after
/// `timeout_ns`. It records no span for them (down, unreachable, or hung
/// along with its exporter), and nothing below it runs.
#[derive(Debug, Clone, Copy)]
pub struct Silence {
    pub timeout_ns: i64,
    pub share: f64,
    pub from_ns: i64,
}

/// A fault on a host's network stack: extra delay per packet in bursts.
#[derive(Debug, Clone, Copy)]
pub struct HostFault {
    pub amount_ns: f64,
    pub bursts: Bursts,
}

/// Edges slower than this because of a fault are labelled with it.
const LABEL_NS: i64 = 500_000;

pub struct Sim<'a, R: Rng + SeedableRng + Clone> {
    pub app: App,
    pub fabric: &'a Fabric,
    pub resolver: Resolver<'a>,
    pub placement: HashMap<&'static str, u16>,
    pub clock_ns: Vec<i64>,
    pub host_fault: Vec<Option<HostFault>>,
    pub service_fault: HashMap<String, ServiceFault>,
    pub silence: HashMap<String, Silence>,
    pub t0: i64,
    pub rng: R,
    pub world: World,
    /// Per host: calls its services make per request (what its scheduling
    /// jitter scales with).
    pub host_calls: Vec<f64>,
    /// Length of the run (ns), over which a loaded machine swells and ebbs.
    pub duration_ns: i64,
    /// Per service instance (one per service): its workers.
    workers: HashMap<&'static str, Pool>,
    pub spans: Vec<OutSpan>,
    pub truth: BTreeMap<String, TruthEdge>,
    paths: HashMap<(u16, u16), HostPath>,
    /// The request being played's parts, where it gathers some.
    gathering: Gathering,
    /// A play that only learns when the parts arrive: it records nothing.
    rehearsal: bool,
}

/// The parts of the request being played ([`Request::gathered`]): when each
/// arrived, in play order, and which of them makes the gathered calls.
#[derive(Default)]
struct Gathering {
    calls: Vec<Vec<Call>>,
    /// Seed of the gathered calls' own random stream: the calls the last
    /// part makes draw nothing from the request's, so the play that makes
    /// them draws what the rehearsal did for every other call. (Packets
    /// through a host fault draw only while its bursts are on, so there an
    /// answer that came back later can move the draws after it, and with
    /// them which part is last: a race, as a real counter's is.)
    seed: u64,
    arrived: Vec<i64>,
    last: Option<usize>,
}

/// What happened inside a server: when it answered, how much of that the
/// service fault added, and whether a call it made was hurt by a fault.
struct Served {
    ss: i64,
    fault_ns: i64,
    /// Time spent queued behind other requests at the instance.
    wait_ns: i64,
    downstream: bool,
    /// The worker that took the request.
    worker: u32,
}

impl<'a, R: Rng + SeedableRng + Clone> Sim<'a, R> {
    pub fn new(
        app: App,
        fabric: &'a Fabric,
        resolver: Resolver<'a>,
        placement: HashMap<&'static str, u16>,
        t0: i64,
        rng: R,
    ) -> Self {
        Sim {
            app,
            fabric,
            resolver,
            placement,
            clock_ns: Vec::new(),
            host_fault: Vec::new(),
            service_fault: HashMap::new(),
            silence: HashMap::new(),
            t0,
            rng,
            world: World::default(),
            host_calls: Vec::new(),
            duration_ns: 1,
            workers: HashMap::new(),
            spans: Vec::new(),
            truth: BTreeMap::new(),
            paths: HashMap::new(),
            gathering: Gathering::default(),
            rehearsal: false,
        }
    }

    fn id(&mut self, bytes: usize) -> String {
        (0..bytes)
            .map(|_| format!("{:02x}", self.rng.gen::<u8>()))
            .collect()
    }

    pub fn path(&mut self, a: u16, b: u16) -> HostPath {
        if let Some(p) = self.paths.get(&(a, b)) {
            return p.clone();
        }
        let p = self
            .resolver
            .path(&self.fabric.index, a, b)
            .cloned()
            .unwrap_or(HostPath {
                forward: Vec::new(),
                reverse: Vec::new(),
            });
        self.paths.insert((a, b), p.clone());
        p
    }

    /// One request arriving at `t`: the root server span and all below it.
    /// A request that gathers parts is rehearsed first: which part arrives
    /// last is known only once they all have, and calls play depth first.
    pub fn request(&mut self, t: i64) {
        let req = self.app.request(&mut self.rng);
        self.workers.values_mut().for_each(|w| w.forget(t));
        if req.gathered.is_empty() {
            self.gathering = Gathering::default();
            return self.play(&req.root, t);
        }
        self.gathering = Gathering {
            calls: req.gathered,
            seed: self.rng.gen(),
            ..Gathering::default()
        };
        let (rng, workers) = (self.rng.clone(), self.workers.clone());
        self.rehearsal = true;
        self.play(&req.root, t);
        self.rehearsal = false;
        (self.rng, self.workers) = (rng, workers);
        let arrived = std::mem::take(&mut self.gathering.arrived);
        // A part that never arrived (its callee silent) leaves the count
        // short, and nobody makes the gathered calls.
        self.gathering.last = (arrived.len() == req.root.parts())
            .then(|| (0..arrived.len()).max_by_key(|&k| (arrived[k], k)))
            .flatten();
        self.play(&req.root, t);
    }

    fn play(&mut self, root: &Call, t: i64) {
        let host = self.placement[root.service];
        let trace = self.id(16);
        let span = self.id(8);
        let served = self.serve(root, host, t, &trace, &span);
        let at = (root.service, host, served.worker);
        self.record(&trace, &span, None, at, true, t, served.ss, None);
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        trace: &str,
        span: &str,
        parent: Option<String>,
        (service, host, worker): (&'static str, u16, u32),
        server: bool,
        start: i64,
        end: i64,
        peer: Option<(u16, u16)>,
    ) {
        if self.rehearsal {
            return;
        }
        let off = self.clock_ns[host as usize];
        self.spans.push(OutSpan {
            trace_id: trace.to_owned(),
            span_id: span.to_owned(),
            parent_id: parent,
            service,
            name: format!("{} {service}", if server { "handle" } else { "call" }),
            host,
            kind: if server {
                SpanKind::Server
            } else {
                SpanKind::Client
            },
            start_ns: start + off,
            end_ns: end + off,
            thread: self.world.thread_ids.then_some(worker),
            peer,
        });
    }

    /// The port a service listens on, one per service, as its callers'
    /// spans name it.
    fn port(&self, service: &str) -> u16 {
        let services = self.app.services();
        8000 + services.iter().position(|&s| s == service).unwrap_or(0) as u16
    }

    /// Time a server takes to issue one RPC (serialise it, hand it to the
    /// kernel) before the next call of a parallel stage can leave:
    /// lognormal around 20 µs. Parallel calls never leave at one instant.
    fn issue_ns(&mut self) -> i64 {
        LogNormal::new(20_000f64.ln(), 0.5).map_or(20_000.0, |d| d.sample(&mut self.rng)) as i64
    }

    /// Stack delay of one packet through `host` at `t`, and the fault's part.
    fn stack(&mut self, host: u16, t: i64) -> (i64, i64) {
        let base = 15_000.0 + Exp::new(1.0 / 10_000.0).map_or(0.0, |d| d.sample(&mut self.rng));
        let fault = match self.host_fault[host as usize] {
            Some(f) if f.bursts.active(t - self.t0) => f.amount_ns * self.rng.gen_range(0.5..1.5),
            _ => 0.0,
        };
        ((base + fault) as i64 + self.jitter(host, t), fault as i64)
    }

    /// Scheduling jitter of one packet through `host` at `t`: noise, not a
    /// fault (no edge is labelled by it). Draws nothing in a quiet world.
    fn jitter(&mut self, host: u16, t: i64) -> i64 {
        let w = self.world;
        let mut mean_us = 0.0;
        if w.jitter_us > 0.0 {
            mean_us += w.jitter_us * self.host_calls.get(host as usize).copied().unwrap_or(0.0);
        }
        if w.load_us > 0.0 {
            mean_us += w.load_us * load_level(t - self.t0, self.duration_ns);
        }
        if mean_us > 0.0 {
            lomax_ns(mean_us * 1e3, &mut self.rng)
        } else {
            0
        }
    }

    fn serve(&mut self, call: &Call, host: u16, sr: i64, trace: &str, span: &str) -> Served {
        let w = self.app.work(call.service);
        let sigma = self.world.work_sigma.unwrap_or(w.sigma);
        let mut work_ms = LogNormal::new(w.median_ms.ln(), sigma)
            .map_or(w.median_ms, |d| d.sample(&mut self.rng));
        if self.rng.gen_bool(w.miss_rate) {
            work_ms *= w.miss_factor;
        }
        let mut fault_ns = 0;
        if let Some(f) = self.service_fault.get(call.service) {
            if sr >= f.from_ns && self.rng.gen_bool(f.share) {
                fault_ns = f.extra_ns as i64;
            }
        }
        let work = (work_ms * 1e6) as i64 + fault_ns;
        let pool = self.world.workers;
        let (start, worker) = self
            .workers
            .entry(call.service)
            .or_insert_with(|| Pool::new(pool))
            .hold(sr, work);
        let before = match self.world.after_share() {
            Some(after) => work - (work as f64 * self.rng.gen_range(after)) as i64,
            None => work / 2,
        };
        let mut t = start + before;
        let mut downstream = false;
        let at = (call.service, host, worker);
        for stage in &call.stages {
            (t, downstream) = self.stage(at, stage, t, downstream, trace, span);
        }
        if call.part {
            let k = self.gathering.arrived.len();
            self.gathering.arrived.push(sr);
            if self.gathering.last == Some(k) {
                let own = R::seed_from_u64(self.gathering.seed);
                let request_stream = std::mem::replace(&mut self.rng, own);
                for stage in std::mem::take(&mut self.gathering.calls) {
                    (t, downstream) = self.stage(at, &stage, t, downstream, trace, span);
                }
                self.rng = request_stream;
            }
        }
        Served {
            ss: t + work - before,
            fault_ns,
            wait_ns: start - sr,
            downstream,
            worker,
        }
    }

    /// One stage of calls from `at` (service, host, worker), sent in
    /// parallel from `t`: when the last answered, and whether a fault hurt
    /// any of them or `downstream` already held.
    fn stage(
        &mut self,
        at: (&'static str, u16, u32),
        stage: &[Call],
        t: i64,
        downstream: bool,
        trace: &str,
        span: &str,
    ) -> (i64, bool) {
        let (mut end, mut send, mut hurt) = (t, t, downstream);
        for (k, child) in stage.iter().enumerate() {
            if k > 0 {
                send += self.issue_ns();
            }
            let (cr, h) = self.rpc(at, child, send, trace, span);
            end = end.max(cr);
            hurt |= h;
        }
        (end, hurt)
    }

    /// One RPC from `caller` at `cs`: returns when the client got the answer
    /// and whether a fault hurt it or anything below it.
    fn rpc(
        &mut self,
        (caller_service, caller, worker): (&'static str, u16, u32),
        call: &Call,
        cs: i64,
        trace: &str,
        parent_span: &str,
    ) -> (i64, bool) {
        let callee = self.placement[call.service];
        let client_span = self.id(8);
        let server_span = self.id(8);
        let peer = (self.world.peer_addresses).then(|| (callee, self.port(call.service)));
        let at = (caller_service, caller, worker);
        if let Some(s) = self.silence.get(call.service).copied() {
            if cs >= s.from_ns && self.rng.gen_bool(s.share) {
                let cr = cs + s.timeout_ns;
                let parent = Some(parent_span.to_owned());
                self.record(trace, &client_span, parent, at, false, cs, cr, peer);
                return (cr, true);
            }
        }
        let path = self.path(caller, callee);
        let (out1, hf1) = self.stack(caller, cs);
        let fwd = self.fabric.cross(&path.forward, cs + out1, &mut self.rng);
        let (in1, hf2) = self.stack(callee, cs + out1 + fwd.delay_ns);
        let sr = cs + out1 + fwd.delay_ns + in1;
        let served = self.serve(call, callee, sr, trace, &server_span);
        let (out2, hf3) = self.stack(callee, served.ss);
        let rev = self
            .fabric
            .cross(&path.reverse, served.ss + out2, &mut self.rng);
        let (in2, hf4) = self.stack(caller, served.ss + out2 + rev.delay_ns);
        let cr = served.ss + out2 + rev.delay_ns + in2;
        // Waiting behind a faulty service's slow requests is that fault's
        // doing; waiting at a healthy one is ordinary load.
        let service_wait = if self.service_fault.contains_key(call.service) {
            served.wait_ns
        } else {
            0
        };
        let parts = [
            ("service", served.fault_ns + service_wait),
            ("network", fwd.fault_link_ns + rev.fault_link_ns),
            ("loss", fwd.retransmit_ns + rev.retransmit_ns),
            ("host", hf1 + hf2 + hf3 + hf4),
        ];
        let (label, worst) = parts
            .iter()
            .fold(("ok", 0), |acc, p| if p.1 > acc.1 { *p } else { acc });
        let label = if worst >= LABEL_NS {
            label
        } else if served.downstream {
            "downstream"
        } else {
            "ok"
        };
        if !self.rehearsal {
            self.truth.insert(
                server_span.clone(),
                TruthEdge {
                    label: label.to_owned(),
                    fabric_excess_ns: fwd.excess_ns + rev.excess_ns,
                },
            );
        }
        let parent = Some(parent_span.to_owned());
        self.record(trace, &client_span, parent, at, false, cs, cr, peer);
        self.record(
            trace,
            &server_span,
            Some(client_span.clone()),
            (call.service, callee, served.worker),
            true,
            sr,
            served.ss,
            None,
        );
        (cr, label != "ok")
    }
}
