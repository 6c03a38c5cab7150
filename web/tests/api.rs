//! The JSON API over real HTTP, on SQLite and PostgreSQL: a database the
//! collector's real pipeline filled (`telemetry::lossy_db`: a line of four
//! switches, s2:2->s3 congested in the first second, path 2 losing ten
//! probes), a database that does not exist yet, and a live stream that
//! follows a collector as it writes.

mod common;

use common::{Served, Writer};
use futures_util::StreamExt;
use intpath_test_support::on_both_backends;
use intpath_test_support::telemetry::lossy_db;
use serde_json::Value;
use std::time::Duration;

async fn answers_over_http(db: String) {
    let db = lossy_db(db).await;
    let s = Served::start(db).await;

    let runs = s.get("runs", 200).await;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(runs["runs"][0]["probes"], 391);

    // Links × time: every directed link a row, 100 ms columns over the
    // run's two seconds, the congested link the hottest.
    let h = s.get("heatmap?metric=qdepth", 200).await;
    let rows = h["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    assert_eq!(h["columns"], 20, "{}", h["columns"]);
    let hottest = rows
        .iter()
        .max_by(|a, b| {
            a["mean"]
                .as_f64()
                .unwrap_or(-1.0)
                .total_cmp(&b["mean"].as_f64().unwrap_or(-1.0))
        })
        .unwrap();
    assert_eq!(hottest["name"], "s2:2->s3");
    assert_eq!(hottest["values"][0], 40.0);
    assert_eq!(hottest["values"][19], 1.0);
    // A range: the second second only.
    let late = s.get("heatmap?from=1&to=2", 200).await;
    assert_eq!(late["columns"], 10);
    assert_eq!(late["rows"][2]["values"][0], 1.0, "{}", late["rows"][2]);
    // Loss: path 2 (leftwards) lost 150..160 in the second second, but
    // loss per link comes from the switches' port counters, which this run
    // has none of: no link is painted with its path's loss.
    let loss = s.get("heatmap?metric=loss", 200).await;
    let lossy: Vec<&str> = loss["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["max"].as_f64().unwrap_or(0.0) > 0.0)
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(lossy.is_empty(), "{lossy:?}");

    let snap = s.get("snapshot", 200).await;
    assert_eq!(
        snap["switches"],
        serde_json::json!(["s1", "s2", "s3", "s4"])
    );
    let cells = snap["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    let top = cells
        .iter()
        .max_by(|a, b| {
            a["value"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["value"].as_f64().unwrap())
        })
        .unwrap();
    assert_eq!(
        (top["src"].as_str(), top["dst"].as_str()),
        (Some("s2"), Some("s3"))
    );

    let topo = s.get("topology", 200).await;
    assert_eq!(topo["links"].as_array().unwrap().len(), 10);
    assert_eq!(
        topo["cables"].as_array().unwrap().len(),
        5,
        "{}",
        topo["cables"]
    );
    let paths: Vec<(u64, Vec<String>)> = topo["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["id"].as_u64().unwrap(),
                serde_json::from_value(p["nodes"].clone()).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            (
                1,
                vec!["s1", "s2", "s3", "s4"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            ),
            (
                2,
                vec!["s4", "s3", "s2", "s1"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            ),
        ]
    );

    for name in ["s2:2->s3", "s2:2", "s2->s3"] {
        let l = s.get(&format!("link?link={}", enc(name)), 200).await;
        assert_eq!(l["name"], "s2:2->s3", "{name}");
        let metrics: Vec<&str> = l["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["metric"].as_str().unwrap())
            .collect();
        assert_eq!(metrics, ["qdepth", "qdelay", "loss"]);
        let depth = l["series"][0]["points"].as_array().unwrap();
        assert_eq!(depth.len(), 20);
        assert_eq!(depth[0]["mean"], 40.0);
    }
    let paths = s.get("paths", 200).await;
    assert_eq!(paths["paths"][1]["lost"], 10, "{paths}");
    assert_eq!(paths["paths"][0]["duplicates"], 1, "{paths}");

    // What cannot be answered, in one line, with the status that says why.
    let e = s.get("link?link=s9:1", 404).await;
    assert_eq!(
        e["error"],
        "no link s9:1 in run 1 (give SRC:PORT->DST, SRC:PORT or SRC->DST)"
    );
    let e = s.get("heatmap?run=7", 404).await;
    assert_eq!(e["error"], "no run 7 in the database");
    let e = s.get("heatmap?from=3&to=1", 400).await;
    assert!(e["error"].as_str().unwrap().contains("not before"), "{e}");
    // No spans: the diagnosis is an answer saying so.
    let d = s.get("diagnosis", 200).await;
    assert_eq!(d["available"], false);
    assert!(d["why"].as_str().unwrap().contains("holds no spans"), "{d}");

    // The page and its script, compiled in.
    let page = reqwest::get(&s.url).await.unwrap();
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(page
        .text()
        .await
        .unwrap()
        .contains("<script src=\"/app.js\">"));
    let js = reqwest::get(format!("{}app.js", s.url)).await.unwrap();
    assert!(js.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    s.stop().await;
}
on_both_backends!(answers_over_http);

fn enc(s: &str) -> String {
    s.replace(':', "%3A").replace('>', "%3E")
}

/// The events of a live stream, as (name, data).
struct Events {
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buf: String,
}

impl Events {
    async fn open(url: &str) -> Self {
        let r = reqwest::get(url).await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-type"], "text/event-stream");
        Events {
            body: Box::pin(r.bytes_stream()),
            buf: String::new(),
        }
    }

    async fn next(&mut self) -> (String, String) {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data += v;
                    }
                }
                if !name.is_empty() {
                    return (name, data);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.body.next())
                .await
                .expect("an event within 20 s")
                .expect("the stream goes on")
                .unwrap();
            self.buf += &String::from_utf8_lossy(&chunk);
        }
    }

    /// The next `update`, its data.
    async fn update(&mut self) -> Value {
        loop {
            let (name, data) = self.next().await;
            if name == "update" {
                return serde_json::from_str(&data).unwrap();
            }
        }
    }
}

/// Before the collector creates the database the server answers and
/// streams `waiting`; then each committed batch reaches the stream.
async fn streams_the_run_while_the_collector_writes(db: String) {
    let db: intpath_store::Db = db.parse().unwrap();
    let s = Served::start(db.clone()).await;
    let runs = s.get("runs", 200).await;
    assert_eq!(runs["runs"], serde_json::json!([]));
    assert!(runs["waiting"].as_str().is_some(), "{runs}");
    let mut events = Events::open(&s.api("live?metric=qdepth")).await;
    assert_eq!(events.next().await.0, "waiting");

    let w = Writer::start(db.clone(), 400).await;
    w.write(0..100).await;
    let mut u = events.update().await;
    // Batches land as the collector flushes: wait for the first second.
    while u["heatmap"]["end_s"].as_f64().unwrap_or(0.0) < 0.95 {
        u = events.update().await;
    }
    assert_eq!(u["run"], 1);
    assert_eq!(u["probes"], 200);
    assert_eq!(u["heatmap"]["rows"][2]["name"], "s2:2->s3");
    assert_eq!(u["heatmap"]["rows"][2]["values"][0], 40.0);

    w.write(100..400).await;
    let mut later = events.update().await;
    while later["probes"].as_i64().unwrap() < 800 {
        later = events.update().await;
    }
    let end = later["heatmap"]["end_s"].as_f64().unwrap();
    assert!((3.9..4.1).contains(&end), "{end}");
    assert_eq!(later["heatmap"]["columns"], 40);
    assert_eq!(w.finish().await, 800);
    // Stopping the server ends the open stream too.
    s.stop().await;

    // A live window shorter than the run: its newest second only.
    let short = Served::start_with(intpath_web::ServeConfig {
        live_window_s: 1.0,
        ..intpath_web::ServeConfig::new(db)
    })
    .await;
    let u = Events::open(&short.api("live")).await.update().await;
    assert_eq!(u["heatmap"]["columns"], 10, "{}", u["heatmap"]["columns"]);
    let t0 = u["heatmap"]["t0"].as_f64().unwrap();
    assert!((2.9..3.1).contains(&t0), "{t0}");
    short.stop().await;
}
on_both_backends!(streams_the_run_while_the_collector_writes);

/// A synthetic link fault whose spans went through the OTLP receiver: the
/// diagnosis names the link, and each request listed for it had a slow
/// call across it, with the time the link added.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diagnosis_names_the_fault_and_the_requests_it_slowed() {
    let dir = tempfile::tempdir().unwrap();
    let truth = common::synth_with_spans(dir.path(), "link:auto:5", 500).await;
    let fault = &truth.faults[0].name;
    let s = Served::start(dir.path().join("telemetry.db")).await;
    let d = s.get("diagnosis", 200).await;
    assert_eq!(d["available"], true, "{d}");
    assert_eq!(d["int"], true);
    let c = &d["culprits"][0];
    assert_eq!(
        (c["kind"].as_str(), c["name"].as_str()),
        (Some("link"), Some(fault.as_str())),
        "{}",
        d["culprits"]
    );
    assert!(
        c["evidence"]["mean_queue_us"].as_f64().unwrap() > 0.0,
        "{c}"
    );
    let worst = c["traces"]["worst"].as_array().unwrap();
    assert!(c["traces"]["count"].as_u64().unwrap() >= worst.len() as u64 && !worst.is_empty());
    for t in worst {
        let calls = t["calls"].as_array().unwrap();
        assert!(!calls.is_empty(), "{t}");
        for call in calls {
            let crossed = [&call["forward"], &call["reverse"]]
                .iter()
                .flat_map(|l| l.as_array().unwrap())
                .any(|l| l == fault.as_str());
            assert!(crossed && call["slow"] == true, "{call}");
            assert!(call["explained_ms"].as_f64().unwrap() > 0.0, "{call}");
        }
        let sum: f64 = calls
            .iter()
            .map(|c| c["explained_ms"].as_f64().unwrap())
            .sum();
        assert!(
            (sum - t["explained_ms"].as_f64().unwrap()).abs() < 0.01,
            "{t}"
        );
    }
    // Asked again while nothing changed: the same answer, not recomputed.
    assert_eq!(s.get("diagnosis", 200).await, d);
    s.stop().await;
}
