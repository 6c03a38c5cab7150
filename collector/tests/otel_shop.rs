//! An application we did not write the telemetry of: apps/shop, eight Flask
//! services and a load generator traced only by the official OpenTelemetry
//! Python SDK and instrumentations, exports over OTLP/HTTP into the real
//! receiver, and the stored spans form the shop's call graph.
//!
//! Attribute keys observed (SDK 1.45.1, flask and requests instrumentation
//! 0.66b1):
//! * default: client spans `http.method`, `http.url`, `http.status_code`,
//!   `user_agent.original`, so the callee is only inside `http.url`; server
//!   spans `http.method`, `http.route`, `http.target`, `http.host`,
//!   `http.scheme`, `http.server_name`, `http.flavor`, `http.user_agent`,
//!   `http.status_code`, `net.host.name`, `net.host.port`, `net.peer.ip`,
//!   `net.peer.port`.
//! * `OTEL_SEMCONV_STABILITY_OPT_IN=http`: client spans `server.address`,
//!   `server.port`, `network.peer.address`, `network.peer.port`, `url.full`,
//!   `http.request.method`, `http.response.status_code`,
//!   `network.protocol.version`, `user_agent.original`; server spans
//!   `client.address`, `client.port`, `server.address` (with the port, as
//!   the Host header has it), `server.port`, `url.scheme`, `url.path`,
//!   `url.query`, `http.route`, `http.request.method`,
//!   `http.response.status_code`, `network.protocol.version`,
//!   `user_agent.original`.

mod common;

use common::otlp::{start, stored};
use intpath_store::spans::{SpanRow, StoredSpans};
use intpath_test_support::shop;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

const SERVER: i32 = 2;
const CLIENT: i32 = 3;

/// Who calls whom in the shop (apps/shop/shopapp/services.py).
const CALLS: [(&str, &str); 10] = [
    ("loadgen", "frontend"),
    ("frontend", "auth"),
    ("frontend", "catalog"),
    ("frontend", "recommend"),
    ("frontend", "cart"),
    ("catalog", "inventory"),
    ("catalog", "pricing"),
    ("recommend", "catalog"),
    ("recommend", "reviews"),
    ("cart", "pricing"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shop_traces_form_its_call_graph_with_stable_http_semconv() {
    let (sent, spans) = run_shop(Some("http")).await;
    let t = Traces::new(&spans);
    t.check_call_graph(sent);
    t.check_peers("server.address", "client.address");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shop_traces_form_its_call_graph_with_default_semconv() {
    let (sent, spans) = run_shop(None).await;
    let t = Traces::new(&spans);
    t.check_call_graph(sent);
    t.check_peers("http.url", "net.peer.ip");
}

/// One shop at a time: two at once would double the load on the machine
/// and push the requests towards their timeout.
static ONE_SHOP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs the whole shop for 8 s at 8 requests/s against a fresh receiver,
/// the instrumentations following `semconv`; how many requests the load
/// generator sent, and the stored spans. The shop's Python spends about
/// 90 ms of CPU a request, so 8 a second is 0.7 of a core: a machine half
/// as fast still answers every request (at 15 a second a slower CI machine
/// saturated and timed out 72 requests of 90).
async fn run_shop(semconv: Option<&'static str>) -> (u64, StoredSpans) {
    let _alone = ONE_SHOP.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let r = start(&db, 4 << 20).await;
    let otlp = format!("http://{}", r.local_addr());
    let env: Vec<(&str, &str)> = semconv
        .map(|m| ("OTEL_SEMCONV_STABILITY_OPT_IN", m))
        .into_iter()
        .collect();
    let report = tokio::task::spawn_blocking(move || {
        shop::run(&shop::Shop {
            app: intpath_test_support::apps::RunLocal {
                otlp: &otlp,
                duration_s: 8,
                rate: 8,
                seed: 1,
                fault: None,
            },
            freeze: None,
            db: None,
            env: &env,
        })
    })
    .await
    .unwrap();
    let load = &report["load"];
    assert_eq!(load["failed"], 0, "{report}");
    let sent = load["sent"].as_u64().unwrap();
    r.shutdown().await.unwrap();
    (sent, stored(&db).await)
}

struct Span<'a> {
    service: &'a str,
    row: &'a SpanRow,
    attributes: Value,
}

/// Stored spans by (trace id, span id), and the server span each client
/// span led to.
struct Traces<'a> {
    spans: HashMap<(&'a str, &'a str), Span<'a>>,
    callee: HashMap<(&'a str, &'a str), &'a str>,
}

impl<'a> Traces<'a> {
    fn new(stored: &'a StoredSpans) -> Self {
        let spans: HashMap<_, _> = stored
            .spans
            .iter()
            .map(|s| {
                let span = Span {
                    service: &stored.resources[&s.resource_id].service,
                    row: &s.span,
                    attributes: serde_json::from_str(&s.span.attributes).unwrap(),
                };
                ((s.span.trace_id.as_str(), s.span.span_id.as_str()), span)
            })
            .collect();
        let callee = spans
            .values()
            .filter(|s| s.row.kind == SERVER)
            .filter_map(|s| {
                Some((
                    (s.row.trace_id.as_str(), s.row.parent_span_id.as_deref()?),
                    s.service,
                ))
            })
            .collect();
        Traces { spans, callee }
    }

    fn parent(&self, s: &Span<'a>) -> Option<&Span<'a>> {
        let id = s.row.parent_span_id.as_deref()?;
        self.spans.get(&(s.row.trace_id.as_str(), id))
    }

    fn of(&self, service: &'a str, kind: i32) -> impl Iterator<Item = &Span<'a>> + '_ {
        self.spans
            .values()
            .filter(move |s| s.service == service && s.row.kind == kind)
    }

    /// Every server span answers a client span of a caller in its trace,
    /// every call of a service is made inside its server span (also from
    /// its thread pools), every call of the graph happens, all `sent`
    /// requests are stored, and the parallel calls do run in parallel.
    fn check_call_graph(&self, sent: u64) {
        let services: BTreeSet<&str> = self.spans.values().map(|s| s.service).collect();
        let want: BTreeSet<&str> = CALLS.iter().flat_map(|&(a, b)| [a, b]).collect();
        assert_eq!(services, want);

        let mut edges = BTreeSet::new();
        for s in self.spans.values() {
            let parent = self.parent(s);
            match (s.row.kind, s.service) {
                (CLIENT, "loadgen") => assert!(parent.is_none()),
                (CLIENT, _) => {
                    let p = parent.unwrap_or_else(|| panic!("{} call without parent", s.service));
                    assert_eq!((p.service, p.row.kind), (s.service, SERVER));
                }
                (SERVER, _) => {
                    let p = parent.unwrap_or_else(|| panic!("{} answered no caller", s.service));
                    assert_eq!(p.row.kind, CLIENT);
                    edges.insert((p.service, s.service));
                }
                (kind, service) => panic!("{service} made a span of kind {kind}"),
            }
        }
        assert_eq!(edges, CALLS.into_iter().collect());
        assert_eq!(self.of("loadgen", CLIENT).count() as u64, sent);
        assert_eq!(self.of("frontend", SERVER).count() as u64, sent);

        // catalog asks inventory 1 to 3 times a request, not always as often.
        let mut fan_outs = BTreeSet::new();
        for catalog in self.of("catalog", SERVER) {
            let n = self
                .children(catalog)
                .filter(|&c| self.callee_of(c) == "inventory")
                .count();
            fan_outs.insert(n);
        }
        assert!(
            fan_outs.len() > 1 && fan_outs.is_subset(&(1..=3).collect()),
            "{fan_outs:?}"
        );

        // frontend's three parallel calls overlap in time, most of the time.
        let overlapping = self
            .of("frontend", SERVER)
            .filter(|home| {
                let fan: Vec<_> = self
                    .children(home)
                    .filter(|&c| self.callee_of(c) != "auth")
                    .collect();
                assert_eq!(fan.len(), 3);
                let last_start = fan.iter().map(|c| c.row.start_ns).max();
                let first_end = fan.iter().map(|c| c.row.end_ns).min();
                last_start < first_end
            })
            .count();
        assert!(2 * overlapping as u64 >= sent, "{overlapping} of {sent}");
    }

    /// Every client span names its callee in attribute `client_key`, every
    /// server span its caller in `server_key`.
    fn check_peers(&self, client_key: &str, server_key: &str) {
        for s in self.spans.values() {
            let key = if s.row.kind == CLIENT {
                client_key
            } else {
                server_key
            };
            let v = s.attributes[key].as_str().unwrap_or_else(|| {
                panic!(
                    "{} {} span without {key}: {}",
                    s.service, s.row.kind, s.attributes
                )
            });
            assert!(v.contains("127.0.0.1"), "{key} = {v}");
        }
    }

    fn children<'s>(&'s self, s: &'s Span<'a>) -> impl Iterator<Item = &'s Span<'a>> + 's {
        self.spans.values().filter(move |c| {
            c.row.trace_id == s.row.trace_id
                && c.row.parent_span_id.as_ref() == Some(&s.row.span_id)
        })
    }

    fn callee_of(&self, client: &Span<'a>) -> &'a str {
        self.callee[&(client.row.trace_id.as_str(), client.row.span_id.as_str())]
    }
}
