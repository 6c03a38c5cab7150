//! Traces shaped as Jaeger's HotROD records them, in Jaeger's JSON: each
//! service's process also records its database's and its cache's calls,
//! under the callee's own service name (`mysql`, `redis`: client spans
//! with `peer.service`, children of the caller's server span). A database
//! slowed from halfway is named, as the callee without spans it is, and
//! not the service that waited on it; with no fault nobody is named.

use intpath_diagnose::culprits::{CulpritKind, Method};
use intpath_diagnose::{Diagnosis, Options, Request};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use serde_json::{json, Value};

const REQUESTS: u64 = 800;
/// Between two requests, µs: 80 s of traffic.
const EVERY_US: u64 = 100_000;
/// One way across the network, µs.
const WIRE_US: u64 = 200;

/// The processes: service and host address. `mysql` and `redis` are
/// recorded by customer's and driver's own processes.
const PROCESSES: [(&str, &str); 5] = [
    ("frontend", "10.0.0.1"),
    ("customer", "10.0.0.2"),
    ("mysql", "10.0.0.2"),
    ("driver", "10.0.0.3"),
    ("redis", "10.0.0.3"),
];

struct Trace {
    id: String,
    spans: Vec<Value>,
}

impl Trace {
    /// A span of process `p` from `start` for `dur` µs; its id.
    fn span(&mut self, p: usize, parent: Option<&str>, kind: &str, start: u64, dur: u64) -> String {
        let id = format!("{:016x}", (self.spans.len() as u64 + 1) << 8 | p as u64);
        let mut tags = vec![json!({"key": "span.kind", "type": "string", "value": kind})];
        if matches!(PROCESSES[p].0, "mysql" | "redis") {
            tags.push(json!({"key": "peer.service", "type": "string", "value": PROCESSES[p].0}));
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

    /// A call from the server span `parent` of process `from` to `to`,
    /// whose own work takes `work` µs and which then queries `store`
    /// (its process) for `query` µs.
    fn call(
        &mut self,
        parent: &str,
        from: usize,
        to: usize,
        at: u64,
        work: u64,
        store: (usize, u64),
    ) {
        let total = 2 * WIRE_US + work + store.1;
        let client = self.span(from, Some(parent), "client", at, total);
        let server = self.span(to, Some(&client), "server", at + WIRE_US, work + store.1);
        self.span(
            store.0,
            Some(&server),
            "client",
            at + WIRE_US + work,
            store.1,
        );
    }
}

/// The Jaeger document of [`REQUESTS`] requests; from halfway, with
/// `slow_mysql`, 30 % of mysql's queries take 15 ms more.
fn hotrod(seed: u64, slow_mysql: bool) -> Value {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let ms = |median: f64| LogNormal::new((median * 1000.0).ln(), 0.4).unwrap();
    let (work, query, cache) = (ms(1.0), ms(4.0), ms(2.0));
    let t0 = 1_750_000_000_000_000u64;
    let processes: serde_json::Map<String, Value> = (PROCESSES.iter().enumerate())
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
        let mut t = Trace {
            id: format!("{:032x}", r + 1),
            spans: Vec::new(),
        };
        let start = t0 + r * EVERY_US;
        let mut draw = |d: &LogNormal<f64>| d.sample(&mut rng) as u64;
        let (w_customer, w_driver, w_front) = (draw(&work), draw(&work), draw(&work));
        let (mut q, c) = (draw(&query), draw(&cache));
        if slow_mysql && r >= REQUESTS / 2 && rng.gen_bool(0.3) {
            q += 15_000;
        }
        let customer = 2 * WIRE_US + w_customer + q;
        let driver = 2 * WIRE_US + w_driver + c;
        let front = t.span(0, None, "server", start, w_front + customer + driver);
        t.call(&front, 0, 1, start + w_front, w_customer, (2, q));
        t.call(&front, 0, 3, start + w_front + customer, w_driver, (4, c));
        data.push(json!({"traceID": t.id, "spans": t.spans, "processes": processes}));
    }
    json!({ "data": data })
}

fn diagnose(doc: &Value) -> Diagnosis {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hotrod.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    intpath_diagnose::run(&Request::of_traces(path), &Options::default()).unwrap()
}

#[test]
fn a_slow_database_recorded_under_its_own_name_is_named_and_not_its_caller() {
    let d = diagnose(&hotrod(1, true));
    assert_eq!(d.rejects.total(), 0, "{:?}", d.rejects);
    let named = d.culprits(Method::Diagnose);
    let first = named.first().unwrap_or_else(|| panic!("{:?}", d.tested()));
    assert_eq!(
        (first.kind, first.name.as_str()),
        (CulpritKind::Dependency, "mysql"),
        "{named:?}"
    );
    assert!(
        !named.iter().any(|c| c.name == "customer"),
        "customer only waited on mysql: {named:?}"
    );
    // 15 ms on 30 % of the queries for half the run: 2.25 ms a request.
    let effect = first.effect_ms.unwrap();
    assert!((1.0..4.0).contains(&effect), "{first:?}");
}

#[test]
fn with_no_fault_nobody_is_named_and_both_stores_are_tested() {
    let d = diagnose(&hotrod(2, false));
    let named = d.culprits(Method::Diagnose);
    assert!(named.is_empty(), "{named:?}");
    let tested = d.tested();
    for store in ["mysql", "redis"] {
        assert!(
            tested
                .iter()
                .any(|c| c.kind == CulpritKind::Dependency && c.name == store),
            "{store} not tested: {tested:?}"
        );
    }
}
