//! Spans sent to the collector's OTLP receiver and read back from the
//! database give the same diagnosis as the trace file they came from.

use intpath_collector::otlp::{Config, Receiver};
use intpath_collector::Store;
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_diagnose::attribution::Options;
use intpath_diagnose::culprits::{rank, Method};
use intpath_diagnose::path::HostPath;
use intpath_diagnose::synth::{generate, App, Config as SynthConfig};
use intpath_diagnose::{diagnose, report, Diagnosis, Request};
use intpath_test_support::otlp::post;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn request(dir: &Path, traces: Option<PathBuf>) -> Request {
    Request {
        traces,
        db: dir.join("telemetry.db").into(),
        topo: Topology::load_file(&dir.join("topology.json")).unwrap(),
        plan: Some(Plan::load(&dir.join("plan.json")).unwrap()),
        format: None,
        host_map: HashMap::new(),
        options: Options::default(),
        strict: false,
    }
}

fn culprits(d: &Diagnosis) -> String {
    let paths: Vec<Option<&HostPath>> = d.paths.iter().map(Some).collect();
    let hosts = d.host_names();
    report::culprits_json(
        d,
        &rank(&d.ranking_inputs(&paths, &hosts), Method::Diagnose),
    )
}

#[test]
fn diagnosis_from_received_spans_equals_the_one_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SynthConfig {
        topo: Topology::load("fattree:k=4").unwrap(),
        app: App::Hotel,
        faults: vec!["service:auto:5:0.3".parse().unwrap()],
        seed: 3,
        requests: 600,
        rate: 150.0,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    };
    generate(&cfg).unwrap();
    let file = dir.path().join("traces.otlp.json");

    // Without spans in the database, --db alone says so.
    let err = diagnose(request(dir.path(), None)).err().unwrap();
    assert!(err.to_string().contains("holds no spans"), "{err}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let summary = rt.block_on(async {
        let store = Store::open(&dir.path().join("telemetry.db")).await.unwrap();
        let cfg = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            max_body: 64 << 20,
            ..Config::default()
        };
        let r = Receiver::start(store, cfg).await.unwrap();
        let body = std::fs::read(&file).unwrap();
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
    });
    assert!(summary.spans_stored > 1000, "{summary:?}");

    let from_file = diagnose(request(dir.path(), Some(file))).unwrap();
    let from_db = diagnose(request(dir.path(), None)).unwrap();
    assert_eq!(from_db.spans, from_file.spans);
    assert_eq!(from_db.edges.len(), from_file.edges.len());
    assert_eq!(report::rpcs_json(&from_db), report::rpcs_json(&from_file));
    assert_eq!(culprits(&from_db), culprits(&from_file));
}
