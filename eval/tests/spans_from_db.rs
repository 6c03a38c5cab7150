//! Spans sent to the collector's OTLP receiver and read back from the
//! database give the same diagnosis as the trace file they came from.

mod common;

use common::{diagnose, generate};
use intpath_collector::otlp::{Config, Receiver};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_diagnose::culprits::Method;
use intpath_diagnose::{report, Baseline, Diagnosis, Request, SpanWindow};
use intpath_eval::synth::{App, Config as SynthConfig};
use intpath_store::Store;
use intpath_test_support::otlp::post;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn request(dir: &Path, traces: Option<PathBuf>) -> Request {
    request_in(dir, traces, SpanWindow::default())
}

fn request_in(dir: &Path, traces: Option<PathBuf>, window: SpanWindow) -> Request {
    Request {
        traces,
        plan: Some(Plan::load(&dir.join("plan.json")).unwrap()),
        topo: Some(Topology::load_file(&dir.join("topology.json")).unwrap()),
        window,
        ..Request::of_db(dir.join("telemetry.db").into())
    }
}

fn culprits(d: &Diagnosis) -> String {
    report::culprits_json(d, &d.culprits(Method::Diagnose), &d.tested())
}

/// A HotelReservation workload with these faults, in a fresh directory;
/// its OTLP file.
fn synth(faults: &[&str], seed: u64, requests: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SynthConfig {
        topo: Topology::load("fattree:k=4").unwrap(),
        app: App::Hotel,
        world: intpath_eval::synth::World::default(),
        faults: faults.iter().map(|f| f.parse().unwrap()).collect(),
        seed,
        requests,
        rate: 150.0,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    };
    generate(&cfg).unwrap();
    let file = dir.path().join("traces.otlp.json");
    (dir, file)
}

#[test]
fn diagnosis_from_received_spans_equals_the_one_from_the_file() {
    let (dir, file) = synth(&["service:auto:5:0.3"], 3, 600);

    // Without spans in the database, --db alone says so.
    let err = diagnose(request(dir.path(), None)).err().unwrap();
    assert!(err.to_string().contains("holds no spans"), "{err}");

    let summary = receive(dir.path(), std::fs::read(&file).unwrap());
    assert!(summary.spans_stored > 1000, "{summary:?}");

    let from_file = diagnose(request(dir.path(), Some(file))).unwrap();
    let from_db = diagnose(request(dir.path(), None)).unwrap();
    assert_eq!(from_db.spans, from_file.spans);
    assert_eq!(from_db.edges.len(), from_file.edges.len());
    assert_eq!(report::rpcs_json(&from_db), report::rpcs_json(&from_file));
    assert_eq!(culprits(&from_db), culprits(&from_file));
}

/// Posts one OTLP JSON body to a receiver storing into `dir`'s database,
/// as an SDK would; returns what the receiver stored.
fn receive(dir: &Path, body: Vec<u8>) -> intpath_collector::otlp::Summary {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = Store::open(&dir.join("telemetry.db")).await.unwrap();
        let cfg = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            max_body: 64 << 20,
            ..Config::default()
        };
        let r = Receiver::start(store, cfg).await.unwrap();
        let addr = r.local_addr().to_string();
        let a = post(
            &reqwest::Client::new(),
            &addr,
            "application/json",
            None,
            body,
        )
        .await
        .unwrap();
        assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
        r.shutdown().await.unwrap()
    })
}

/// The same spans a day earlier with other ids: what an earlier run left in
/// the database.
fn a_day_earlier(doc: &mut Value) {
    const DAY_NS: i64 = 86_400_000_000_000;
    let flip = |v: &mut Value| {
        if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
            let first = if s.starts_with('f') { "e" } else { "f" };
            *v = Value::String(format!("{first}{}", &s[1..]));
        }
    };
    for rs in doc["resourceSpans"].as_array_mut().unwrap() {
        for ss in rs["scopeSpans"].as_array_mut().unwrap() {
            for span in ss["spans"].as_array_mut().unwrap() {
                for key in ["startTimeUnixNano", "endTimeUnixNano"] {
                    let t = &mut span[key];
                    let ns = t.as_i64().or_else(|| t.as_str()?.parse().ok()).unwrap();
                    *t = Value::String((ns - DAY_NS).to_string());
                }
                for key in ["traceId", "spanId", "parentSpanId"] {
                    if let Some(id) = span.get_mut(key) {
                        flip(id);
                    }
                }
            }
        }
    }
}

#[test]
fn an_earlier_runs_spans_in_the_database_stay_out_of_the_diagnosis() {
    let (dir, file) = synth(&["link:auto:5"], 5, 400);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut old: Value = serde_json::from_str(&text).unwrap();
    a_day_earlier(&mut old);
    let old_stored = receive(dir.path(), serde_json::to_vec(&old).unwrap()).spans_stored;
    let new_stored = receive(dir.path(), text.into_bytes()).spans_stored;
    assert_eq!(old_stored, new_stored);

    let from_file = diagnose(request(dir.path(), Some(file.clone()))).unwrap();
    // By default: the newest run's window, which the old spans are outside.
    let from_run = diagnose(request(dir.path(), None)).unwrap();
    assert_eq!(from_run.spans, from_file.spans);
    assert_eq!(culprits(&from_run), culprits(&from_file));
    // The same run named, or its time span given in ns.
    let run = diagnose(request_in(dir.path(), None, SpanWindow::Run(1))).unwrap();
    assert_eq!(run.spans, from_file.spans);
    let (lo, hi) = from_file
        .edges
        .iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), e| {
            (lo.min(e.cs), hi.max(e.cr))
        });
    let between = SpanWindow::Between(lo - 1_000_000_000, hi + 1_000_000_000);
    let between = diagnose(request_in(dir.path(), None, between)).unwrap();
    assert_eq!(between.spans, from_file.spans);
    // Every span: the old ones are read too, and rejected as outside the run.
    let all = diagnose(request_in(dir.path(), None, SpanWindow::All)).unwrap();
    assert_eq!(all.spans, 2 * from_file.spans);
    assert!(all.rejects.total() > 0, "{:?}", all.rejects);
    // A run the database does not hold is named in the error.
    let err = diagnose(request_in(dir.path(), None, SpanWindow::Run(7)))
        .err()
        .unwrap();
    assert!(err.to_string().contains("no run 7"), "{err}");
    // A window holding nothing says so.
    let err = diagnose(request_in(dir.path(), None, SpanWindow::Between(0, 10)))
        .err()
        .unwrap();
    assert!(err.to_string().contains("no stored span started"), "{err}");
}

/// A healthy period's spans stored a day before the run, as an earlier
/// capture leaves them, named as the baseline by their time span: a
/// service slowed from the run's first request on is named against them,
/// and not without them. Without the database they are in, a stored
/// baseline is refused.
#[test]
fn a_healthy_period_stored_earlier_is_the_baseline_of_a_fault_present_all_run() {
    let (dir, file) = synth(&["service:auto:5:0.3@0"], 7, 1500);
    let (_healthy_dir, healthy_file) = synth(&[], 8, 1500);
    let healthy_spans = diagnose(Request::of_traces(healthy_file.clone()))
        .unwrap()
        .spans;
    let mut healthy: Value =
        serde_json::from_str(&std::fs::read_to_string(&healthy_file).unwrap()).unwrap();
    a_day_earlier(&mut healthy);
    receive(dir.path(), serde_json::to_vec(&healthy).unwrap());
    receive(dir.path(), std::fs::read(&file).unwrap());
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("truth.json")).unwrap())
            .unwrap();
    let slowed = truth["faults"][0]["name"].as_str().unwrap();

    let alone = diagnose(request(dir.path(), None)).unwrap();
    let named = |d: &Diagnosis| -> Vec<String> {
        let ranking = d.culprits(Method::Diagnose);
        ranking.iter().map(|c| c.name.clone()).collect()
    };
    assert!(
        !named(&alone).iter().any(|n| n == slowed),
        "{:?}",
        named(&alone)
    );

    // Everything stored up to an hour before the run's first span.
    let first = alone.edges.iter().map(|e| e.cs).min().unwrap();
    let earlier = SpanWindow::Between(i64::MIN, first - 3_600_000_000_000);
    let compared = diagnose(Request {
        baseline: Some(Baseline::Stored(earlier)),
        ..request(dir.path(), None)
    })
    .unwrap();
    let b = compared.baseline.as_ref().unwrap();
    assert_eq!(
        b.spans, healthy_spans,
        "the baseline read is not the healthy run"
    );
    assert_eq!(named(&compared).first().map(String::as_str), Some(slowed));

    let err = diagnose(Request {
        baseline: Some(Baseline::Stored(earlier)),
        ..Request::of_traces(file)
    })
    .err()
    .unwrap();
    assert!(err.to_string().contains("needs the database"), "{err}");
}
