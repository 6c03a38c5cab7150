//! What the web tests share: the server started in-process on a free
//! loopback port, telemetry written by the collector's real pipeline while
//! the test watches, and a synthetic workload whose spans went through the
//! real OTLP receiver.

#![allow(dead_code)]

pub mod browser;

use intpath_collector::capture::{Collector, Intake};
use intpath_collector::otlp::{Config as OtlpConfig, Receiver};
use intpath_eval::synth::{App, Config as SynthConfig, Truth};
use intpath_store::{Db, Store};
use intpath_test_support::telemetry::{line4, options, plan, probes};
use intpath_web::{ServeConfig, Server};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running `intpath serve`.
pub struct Served {
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), intpath_web::WebError>>,
}

impl Served {
    pub async fn start(db: impl Into<Db>) -> Self {
        Self::start_with(ServeConfig::new(db.into())).await
    }

    /// With `config`, on a free loopback port.
    pub async fn start_with(config: ServeConfig) -> Self {
        let config = ServeConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..config
        };
        let server = Server::bind(config).await.unwrap();
        let url = server.url();
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Served {
            url,
            stop: Some(stop),
            task,
        }
    }

    pub fn api(&self, path: &str) -> String {
        format!("{}api/{path}", self.url)
    }

    /// GETs `path` and reads its JSON, asserting the status.
    pub async fn get(&self, path: &str, status: u16) -> serde_json::Value {
        let r = reqwest::get(self.api(path)).await.unwrap();
        assert_eq!(r.status().as_u16(), status, "{path}");
        let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ct.starts_with("application/json"), "{path}: {ct}");
        r.json().await.unwrap()
    }

    /// Stops the server; it must end within five seconds, whatever streams
    /// are still open.
    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("the server stops within 5 s")
            .unwrap()
            .unwrap();
    }
}

/// The collector's real pipeline writing `telemetry::line4`'s probes
/// into `db` in steps, as while a network runs: 100 probes per path per
/// second of their time, the link s2:2->s3 congested in the first second.
pub struct Writer {
    collector: Collector,
    intake: Intake,
    frames: Vec<(u32, Vec<u8>)>,
}

impl Writer {
    pub async fn start(db: impl Into<Db>, seqs: u32) -> Self {
        let store = Store::open(db).await.unwrap();
        let collector = Collector::start(store, Arc::new(line4()), &plan(), options())
            .await
            .unwrap();
        let intake = collector.intake();
        let frames = probes(&line4(), &plan(), seqs)
            .into_iter()
            .map(|p| (p.payload.sequence, p.to_bytes().unwrap()))
            .collect();
        Writer {
            collector,
            intake,
            frames,
        }
    }

    /// Submits the probes with sequence numbers in `seqs`.
    pub async fn write(&self, seqs: std::ops::Range<u32>) {
        for (seq, f) in &self.frames {
            if seqs.contains(seq) {
                self.intake.submit_frame(f).await.unwrap();
            }
        }
    }

    pub async fn finish(self) -> u64 {
        drop(self.intake);
        self.collector.shutdown().await.unwrap().probes
    }
}

/// A HotelReservation workload on a FatTree k=4 with `fault`, written into
/// `dir` (telemetry.db, topology, plan, truth), its spans then posted to
/// the real OTLP receiver storing into the same database.
pub async fn synth_with_spans(dir: &Path, fault: &str, requests: usize) -> Truth {
    let cfg = SynthConfig {
        topo: intpath_core::topo::Topology::load("fattree:k=4").unwrap(),
        app: App::Hotel,
        world: Default::default(),
        faults: vec![fault.parse().unwrap()],
        seed: 7,
        requests,
        rate: 150.0,
        probe_rate: 50.0,
        out: dir.to_owned(),
    };
    let truth = intpath_eval::synth::generate(&cfg).await.unwrap();
    let body = std::fs::read(dir.join("traces.otlp.json")).unwrap();
    let store = Store::open(&dir.join("telemetry.db")).await.unwrap();
    let r = Receiver::start(
        store,
        OtlpConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            max_body: 64 << 20,
            ..OtlpConfig::default()
        },
    )
    .await
    .unwrap();
    let a = intpath_test_support::otlp::post(
        &reqwest::Client::new(),
        &r.local_addr().to_string(),
        "application/json",
        None,
        body,
    )
    .await
    .unwrap();
    assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    let s = r.shutdown().await.unwrap();
    assert!(s.spans_stored > 1000, "{s:?}");
    truth
}
