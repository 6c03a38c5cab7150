//! Traces shaped as two well-known applications we did not write record
//! them, in Jaeger's JSON, each with a fault from halfway and without:
//!
//! - **HotROD** (Jaeger's demo): each service's process also records its
//!   database's and its cache's calls, under the callee's own service
//!   name (`mysql`, `redis`: client spans with `peer.service`, children of
//!   the caller's server span). A slow `mysql` is named, as the callee
//!   without spans it is, and not `customer`, which waited on it.
//! - **DeathStarBench**'s social network: OpenTracing spans with no
//!   `span.kind` at all, a `*_server` span under the caller's `*_client`
//!   span. A slow `text-service` is named.
//!
//! - **A monolith**: one service, called by nobody traced (a browser),
//!   that queries its database and its cache itself, HotROD's way. A slow
//!   database is named though no edge joins the two, and a loaded machine
//!   that slows all three is no fault.
//!
//! With no fault nobody is named.

use intpath_diagnose::culprits::{Culprit, CulpritKind, Method};
use intpath_diagnose::{Diagnosis, Options, Request};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use serde_json::{json, Value};

const REQUESTS: u64 = 800;
/// Between two requests, µs: 80 s of traffic.
const EVERY_US: u64 = 100_000;
/// One way across the network, µs.
const WIRE_US: u64 = 200;

/// A service's part in one request: its own work, then each call in
/// turn, then its queries to stores that record no server span, one
/// after the other (each by the process given: the service's own, or one
/// named for the store).
struct Part {
    process: usize,
    work_us: u64,
    calls: Vec<Part>,
    stores: Vec<(usize, u64)>,
}

impl Part {
    /// Its server span's length, µs.
    fn total(&self) -> u64 {
        let calls: u64 = self.calls.iter().map(|c| 2 * WIRE_US + c.total()).sum();
        self.work_us + calls + self.stores.iter().map(|s| s.1).sum::<u64>()
    }
}

struct Trace<'a> {
    id: String,
    spans: Vec<Value>,
    processes: &'a [&'a str],
    /// Whether spans carry `span.kind` (HotROD) or not (DeathStarBench).
    kinds: bool,
}

impl Trace<'_> {
    /// A span of process `p` from `start` for `dur` µs; its id.
    fn span(&mut self, p: usize, parent: Option<&str>, kind: &str, start: u64, dur: u64) -> String {
        let id = format!("{:016x}", ((self.spans.len() as u64 + 1) << 8) | p as u64);
        let mut tags = Vec::new();
        if self.kinds {
            tags.push(json!({"key": "span.kind", "type": "string", "value": kind}));
        }
        if matches!(self.processes[p], "mysql" | "redis") {
            let peer = self.processes[p];
            tags.push(json!({"key": "peer.service", "type": "string", "value": peer}));
        }
        let references: Vec<Value> = (parent.iter())
            .map(|p| json!({"refType": "CHILD_OF", "traceID": self.id, "spanID": p}))
            .collect();
        self.spans.push(json!({
            "traceID": self.id, "spanID": id, "operationName": "op",
            "references": references, "startTime": start, "duration": dur,
            "tags": tags, "processID": format!("p{p}"),
        }));
        id
    }

    /// `part`'s server span under `parent` from `at`, and everything under it.
    fn serve(&mut self, parent: Option<&str>, part: &Part, at: u64) {
        let server = self.span(part.process, parent, "server", at, part.total());
        let mut t = at + part.work_us;
        for call in &part.calls {
            let took = 2 * WIRE_US + call.total();
            let client = self.span(part.process, Some(&server), "client", t, took);
            self.serve(Some(&client), call, t + WIRE_US);
            t += took;
        }
        for &(p, us) in &part.stores {
            self.span(p, Some(&server), "client", t, us);
            t += us;
        }
    }
}

/// Which application's shape, and whether its fault is on.
#[derive(Clone, Copy)]
enum App {
    HotRod,
    DeathStarBench,
    Monolith,
}

impl App {
    /// The processes: service and host address.
    fn processes(self) -> &'static [(&'static str, &'static str)] {
        match self {
            // mysql and redis are recorded by customer's and driver's
            // own processes.
            App::HotRod => &[
                ("frontend", "10.0.0.1"),
                ("customer", "10.0.0.2"),
                ("mysql", "10.0.0.2"),
                ("driver", "10.0.0.3"),
                ("redis", "10.0.0.3"),
            ],
            App::DeathStarBench => &[
                ("nginx-web-server", "10.0.0.1"),
                ("compose-post-service", "10.0.0.2"),
                ("text-service", "10.0.0.3"),
                ("user-service", "10.0.0.4"),
                ("post-storage-service", "10.0.0.5"),
            ],
            App::Monolith => &[
                ("shop", "10.0.0.1"),
                ("mysql", "10.0.0.1"),
                ("redis", "10.0.0.1"),
            ],
        }
    }

    /// One request's parts, drawn by `draw(median ms)`; `slow` adds 15 ms
    /// to the faulted callee (HotROD's and the monolith's mysql,
    /// DeathStarBench's text-service).
    fn request(self, draw: &mut dyn FnMut(f64) -> u64, slow: bool) -> Part {
        let extra = if slow { 15_000 } else { 0 };
        let leaf = |process, work_us| Part {
            process,
            work_us,
            calls: Vec::new(),
            stores: Vec::new(),
        };
        match self {
            App::HotRod => {
                let mut customer = leaf(1, draw(1.0));
                customer.stores = vec![(2, draw(4.0) + extra)];
                let mut driver = leaf(3, draw(1.0));
                driver.stores = vec![(4, draw(2.0))];
                Part {
                    calls: vec![customer, driver],
                    ..leaf(0, draw(1.0))
                }
            }
            App::DeathStarBench => {
                let mut storage = leaf(4, draw(1.0));
                // MongoDB's insert, recorded by post-storage itself.
                storage.stores = vec![(4, draw(3.0))];
                let compose = Part {
                    calls: vec![leaf(2, draw(2.0) + extra), leaf(3, draw(1.0)), storage],
                    ..leaf(1, draw(1.0))
                };
                Part {
                    calls: vec![compose],
                    ..leaf(0, draw(0.5))
                }
            }
            App::Monolith => Part {
                stores: vec![(1, draw(4.0) + extra), (2, draw(0.5))],
                ..leaf(0, draw(1.0))
            },
        }
    }
}

/// The Jaeger document of [`REQUESTS`] requests of `app`; from halfway,
/// with `fault`, 30 % of the faulted callee's calls take 15 ms more.
fn traces(app: App, seed: u64, fault: bool) -> Value {
    traces_on(app, seed, fault, 1.0)
}

/// As [`traces`], on a machine whose load makes everything `swell` times
/// as slow from a quarter of the run to its half.
fn traces_on(app: App, seed: u64, fault: bool, swell: f64) -> Value {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let t0 = 1_750_000_000_000_000u64;
    let names: Vec<&str> = app.processes().iter().map(|(s, _)| *s).collect();
    let processes: serde_json::Map<String, Value> = (app.processes().iter().enumerate())
        .map(|(i, (service, ip))| {
            let tags = [json!({"key": "ip", "type": "string", "value": ip})];
            (
                format!("p{i}"),
                json!({"serviceName": service, "tags": tags}),
            )
        })
        .collect();
    let mut data = Vec::new();
    for r in 0..REQUESTS {
        let slow = fault && r >= REQUESTS / 2 && rng.gen_bool(0.3);
        let load = match (REQUESTS / 4..REQUESTS / 2).contains(&r) {
            true => swell,
            false => 1.0,
        };
        let mut draw = |median_ms: f64| {
            let d = LogNormal::new((median_ms * 1000.0 * load).ln(), 0.4).unwrap();
            d.sample(&mut rng) as u64
        };
        let part = app.request(&mut draw, slow);
        let mut t = Trace {
            id: format!("{:032x}", r + 1),
            spans: Vec::new(),
            processes: &names,
            kinds: !matches!(app, App::DeathStarBench),
        };
        t.serve(None, &part, t0 + r * EVERY_US);
        data.push(json!({"traceID": t.id, "spans": t.spans, "processes": processes}));
    }
    json!({ "data": data })
}

fn diagnose(doc: &Value) -> Diagnosis {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("traces.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    intpath_diagnose::run(&Request::of_traces(path), &Options::default()).unwrap()
}

fn first_named(d: &Diagnosis) -> (Vec<Culprit>, Culprit) {
    let named = d.culprits(Method::Diagnose);
    let first = (named.first().cloned()).unwrap_or_else(|| panic!("{:?}", d.tested()));
    (named, first)
}

/// Everything named, the first being `kind` `name` with the fault's size:
/// 15 ms on 30 % of the calls for half the run, 2.25 ms a request.
fn named_first(d: &Diagnosis, kind: CulpritKind, name: &str) -> Vec<Culprit> {
    let (named, first) = first_named(d);
    assert_eq!((first.kind, first.name.as_str()), (kind, name), "{named:?}");
    let effect = first.effect_ms.unwrap();
    assert!((1.0..4.0).contains(&effect), "{first:?}");
    named
}

/// Nobody named, and each of `names` tested as `kind`.
fn nobody_named(d: &Diagnosis, kind: CulpritKind, names: &[&str]) {
    let named = d.culprits(Method::Diagnose);
    assert!(named.is_empty(), "{named:?}");
    let tested = d.tested();
    for name in names {
        assert!(
            (tested.iter()).any(|c| c.kind == kind && c.name == *name),
            "{name} not tested: {tested:?}"
        );
    }
}

#[test]
fn hotrod_a_slow_database_recorded_under_its_own_name_is_named_and_not_its_caller() {
    let d = diagnose(&traces(App::HotRod, 1, true));
    assert_eq!(d.rejects.total(), 0, "{:?}", d.rejects);
    let named = named_first(&d, CulpritKind::Dependency, "mysql");
    assert!(
        !named.iter().any(|c| c.name == "customer"),
        "customer only waited on mysql: {named:?}"
    );
}

#[test]
fn hotrod_with_no_fault_nobody_is_named_and_both_stores_are_tested() {
    let d = diagnose(&traces(App::HotRod, 2, false));
    nobody_named(&d, CulpritKind::Dependency, &["mysql", "redis"]);
}

#[test]
fn deathstarbench_spans_without_kinds_still_name_the_slow_service() {
    let d = diagnose(&traces(App::DeathStarBench, 3, true));
    // Every call between services joined: four a request.
    assert_eq!(d.edges.len() as u64, 4 * REQUESTS, "{:?}", d.rejects);
    named_first(&d, CulpritKind::Service, "text-service");
}

#[test]
fn deathstarbench_with_no_fault_nobody_is_named() {
    let d = diagnose(&traces(App::DeathStarBench, 4, false));
    nobody_named(&d, CulpritKind::Service, &["text-service"]);
}

#[test]
fn monolith_a_slow_database_only_the_entry_service_queries_is_named() {
    let d = diagnose(&traces(App::Monolith, 5, true));
    assert_eq!(d.rejects.total(), 0, "{:?}", d.rejects);
    let named = named_first(&d, CulpritKind::Dependency, "mysql");
    assert!(!named.iter().any(|c| c.name == "shop"), "{named:?}");
}

#[test]
fn monolith_with_no_fault_nobody_is_named() {
    let d = diagnose(&traces(App::Monolith, 6, false));
    nobody_named(&d, CulpritKind::Dependency, &["mysql", "redis"]);
}

#[test]
fn monolith_a_loaded_machine_is_no_fault_of_its_own_or_its_database() {
    // One service cannot set a load factor alone: its stores' calls,
    // slowed as much, set it with it.
    let d = diagnose(&traces_on(App::Monolith, 7, false, 1.6));
    nobody_named(&d, CulpritKind::Dependency, &["mysql"]);
}
