//! The six services as real processes on loopback, exporting OTLP/HTTP to a
//! sink in the test: every request's trace is whole, the call graph is
//! HotelReservation's, and the profile delay fault is in profile's spans.

mod support;

use std::collections::{BTreeSet, HashMap};
use std::process::Command;
use std::time::Duration;
use support::{load, Hotel, RecSpan, Sink, BIN};

const SERVER: i32 = 2;
const CLIENT: i32 = 3;
const DELAY_MS: u64 = 30;
const DELAY_PCT: f64 = 40.0;

/// The caller → callee edges of one trace, checking on the way that every
/// client span has exactly one child: the callee's server span.
fn edges(spans: &[&RecSpan], addr_of: &HashMap<String, String>) -> BTreeSet<(String, String)> {
    let by_id: HashMap<&str, &RecSpan> = spans.iter().map(|s| (s.span_id.as_str(), *s)).collect();
    let mut children: HashMap<&str, Vec<&RecSpan>> = HashMap::new();
    for s in spans.iter().filter(|s| s.parent_id.is_some()) {
        let parent = s.parent_id.as_deref().unwrap();
        assert!(
            by_id.contains_key(parent),
            "span {} has a parent outside its trace",
            s.name
        );
        children.entry(parent).or_default().push(s);
    }
    let mut out = BTreeSet::new();
    for c in spans.iter().filter(|s| s.kind == CLIENT) {
        let caller = by_id[c.parent_id.as_deref().unwrap()];
        assert_eq!(
            caller.kind, SERVER,
            "a client span's parent is its service's server span"
        );
        assert_eq!(caller.service, c.service);
        let kids = children
            .get(c.span_id.as_str())
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            kids.len(),
            1,
            "client span {} has {} children",
            c.name,
            kids.len()
        );
        let callee = kids[0];
        assert_eq!(callee.kind, SERVER);
        assert_eq!(Some(callee.service.as_str()), c.attr("peer.service"));
        // The client names the callee's address; the callee names the caller's.
        let target = format!(
            "{}:{}",
            c.attr("server.address").unwrap(),
            c.attr("server.port").unwrap()
        );
        assert_eq!(addr_of[&callee.service], target);
        assert_eq!(callee.attr("network.peer.address"), Some("127.0.0.1"));
        assert!(callee.start_ns >= c.start_ns && callee.end_ns <= c.end_ns + 1_000_000);
        out.insert((c.service.clone(), callee.service.clone()));
    }
    for s in spans
        .iter()
        .filter(|s| s.kind == SERVER && s.parent_id.is_some())
    {
        assert_eq!(
            by_id[s.parent_id.as_deref().unwrap()].kind,
            CLIENT,
            "server span {} not under a client span",
            s.name
        );
    }
    out
}

fn graph(edges: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    edges
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn traces_are_whole_and_show_the_call_graph_and_the_delay_fault() {
    let sink = Sink::start();
    let endpoint = sink.endpoint();
    let delay = DELAY_MS.to_string();
    let pct = DELAY_PCT.to_string();
    let hotel = Hotel::start(
        &["--otlp-endpoint", &endpoint],
        &[("profile", &["--delay-ms", &delay, "--delay-pct", &pct])],
    );
    let addr_of: HashMap<String, String> = [
        "frontend",
        "search",
        "geo",
        "rate",
        "profile",
        "reservation",
    ]
    .iter()
    .map(|n| (n.to_string(), hotel.addr(n).to_string()))
    .collect();
    let summary = load(
        hotel.addr("frontend"),
        &["--rate", "40", "--duration", "4", "--seed", "7"],
    );
    for (name, st) in hotel.stop() {
        assert!(st.success(), "{name} exited with {st}");
    }
    let requests = summary["requests"].as_u64().unwrap();
    assert!(requests > 100, "{summary}");
    assert_eq!(summary["errors"], 0, "{summary}");

    let spans = sink.spans();
    let mut traces: HashMap<&str, Vec<&RecSpan>> = HashMap::new();
    for s in &spans {
        traces.entry(&s.trace_id).or_default().push(s);
    }
    assert_eq!(traces.len() as u64, requests, "one trace per request");
    let expected: HashMap<&str, BTreeSet<(String, String)>> = [
        (
            "/hotels",
            graph(&[
                ("frontend", "search"),
                ("search", "geo"),
                ("search", "rate"),
                ("frontend", "profile"),
            ]),
        ),
        ("/profile", graph(&[("frontend", "profile")])),
        ("/reserve", graph(&[("frontend", "reservation")])),
    ]
    .into();
    let mut by_route: HashMap<String, u64> = HashMap::new();
    for spans in traces.values() {
        let roots: Vec<_> = spans.iter().filter(|s| s.parent_id.is_none()).collect();
        assert_eq!(roots.len(), 1, "one root per trace");
        let root = roots[0];
        assert_eq!((root.service.as_str(), root.kind), ("frontend", SERVER));
        let route = root.attr("url.path").unwrap();
        assert_eq!(
            edges(spans, &addr_of),
            expected[route],
            "call graph of {route}"
        );
        // Two spans per edge (client, server) plus the root.
        assert_eq!(spans.len(), 1 + 2 * expected[route].len());
        *by_route.entry(route.to_owned()).or_default() += 1;
    }
    for (route, kind) in [
        ("/hotels", "search"),
        ("/profile", "profile"),
        ("/reserve", "reserve"),
    ] {
        assert_eq!(
            by_route.get(route).copied().unwrap_or(0),
            summary["by_kind"][kind].as_u64().unwrap_or(0)
        );
    }
    for s in &spans {
        assert_eq!(s.host_ip, "127.0.0.1", "host.ip of {}", s.service);
    }

    // The fault: about DELAY_PCT % of profile's server spans are at least
    // DELAY_MS long, exactly those marked, and no other service's are.
    let d = Duration::from_millis(DELAY_MS);
    let profile: Vec<&RecSpan> = spans
        .iter()
        .filter(|s| s.service == "profile" && s.kind == SERVER)
        .collect();
    let slow = profile.iter().filter(|s| s.duration() >= d).count();
    let marked = profile
        .iter()
        .filter(|s| s.attr("fault.delay_ms").is_some())
        .count();
    assert_eq!(slow, marked, "slow profile spans are the delayed ones");
    let share = 100.0 * slow as f64 / profile.len() as f64;
    assert!(
        (share - DELAY_PCT).abs() < 15.0,
        "{share:.1} % of {} profile spans delayed",
        profile.len()
    );
    let fast_median = {
        let mut f: Vec<Duration> = profile
            .iter()
            .map(|s| s.duration())
            .filter(|t| *t < d)
            .collect();
        f.sort();
        f[f.len() / 2]
    };
    assert!(
        fast_median < d / 3,
        "undelayed profile spans take {fast_median:?}"
    );
    let others: Vec<&RecSpan> = spans
        .iter()
        .filter(|s| {
            s.kind == SERVER && ["geo", "rate", "reservation"].contains(&s.service.as_str())
        })
        .collect();
    assert!(others.iter().all(|s| s.attr("fault.delay_ms").is_none()));
    let mut t: Vec<Duration> = others.iter().map(|s| s.duration()).collect();
    t.sort();
    assert!(
        t[t.len() / 2] < d / 3,
        "undelayed services take {:?}",
        t[t.len() / 2]
    );
}

#[test]
fn tracing_off_exports_nothing_and_a_dead_collector_costs_no_request() {
    let sink = Sink::start();
    let endpoint = sink.endpoint();
    let off = Hotel::start(&["--otlp-endpoint", &endpoint, "--no-tracing"], &[]);
    let s = load(off.addr("frontend"), &["--rate", "50", "--duration", "1"]);
    assert!(off.stop().iter().all(|(_, st)| st.success()));
    assert_eq!(s["errors"], 0, "{s}");
    assert!(s["requests"].as_u64().unwrap() > 20);
    assert!(sink.spans().is_empty(), "no spans when tracing is off");

    // A collector that is not there: exports fail, requests do not.
    let dead = Hotel::start(&["--otlp-endpoint", "http://127.0.0.1:9"], &[]);
    let s = load(dead.addr("frontend"), &["--rate", "50", "--duration", "1"]);
    // Spans it could not deliver make the exit status 1 (with the reason
    // logged), never a crash.
    for (name, st) in dead.stop() {
        assert!(matches!(st.code(), Some(0 | 1)), "{name} exited with {st}");
    }
    assert_eq!(s["errors"], 0, "{s}");
}

#[test]
fn bad_flags_are_one_line_errors() {
    for args in [
        &["serve", "--service", "frontend"][..],
        &[
            "serve",
            "--service",
            "search",
            "--peers",
            "geo=127.0.0.1:1,moon=127.0.0.1:2",
        ],
        &["serve", "--service", "geo", "--peers", "rate=127.0.0.1:1"],
        &[
            "serve",
            "--service",
            "geo",
            "--delay-ms",
            "5",
            "--delay-pct",
            "120",
        ],
        &["serve", "--service", "geo", "--listen", "203.0.113.9:1"],
        &[
            "load",
            "--frontend",
            "127.0.0.1:1",
            "--rate",
            "0",
            "--duration",
            "1",
        ],
        &["load", "--frontend", "127.0.0.1:1", "--mix", "search=0"],
        &["load", "--frontend", "127.0.0.1:1", "--duration", "-1"],
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or_default();
        assert!(first.contains("error"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // An unreachable frontend is counted as errors, not a crash.
    let out = Command::new(BIN)
        .args([
            "load",
            "--json",
            "--frontend",
            "127.0.0.1:9",
            "--rate",
            "20",
            "--duration",
            "0.5",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["errors"], s["requests"]);
    assert!(s["first_error"].as_str().unwrap().contains("127.0.0.1:9"));
}
