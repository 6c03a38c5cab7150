//! What each `--store` mode keeps and costs on the same input, and what a
//! `/metrics` scrape costs, on a FatTree k=8 measured in both directions
//! (512 directed switch links, the planner's 12 paths).
//!
//! `cargo bench -p intpath-collector --bench volume` feeds the same probe
//! frames (every path at `RATE` probes/s for `SECONDS` of probe time)
//! through the real collector (intake → parse → validate → writer → SQLite)
//! once per mode, and prints the rate, the rows kept and the bytes, with
//! bytes per day at that probe rate.

use intpath_collector::capture::{Collector, Options};
use intpath_collector::metrics::Metrics;
use intpath_collector::synth::{finished_probe, Conditions};
use intpath_collector::Plausibility;
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use intpath_store::links::LinkMap;
use intpath_store::Store;
use intpath_store::StoreMode;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RATE: u64 = 100;
const SECONDS: u64 = 60;
const T0: u64 = 1_700_000_000_000_000_000;

fn frames(links: &LinkMap, plan: &Plan) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for seq in 0..(RATE * SECONDS) as u32 {
        let send_ns = T0 + u64::from(seq) * (1_000_000_000 / RATE);
        let q = move |l: u32| (l * 7 + seq) % 50;
        for p in &plan.paths {
            let c = Conditions {
                sequence: seq,
                send_ns,
                qdepth: &q,
                sink_port: 1,
            };
            out.push(finished_probe(p, links, &c).to_bytes().expect("probe"));
        }
    }
    out
}

async fn count(db: &Path, table: &str) -> i64 {
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .read_only(true);
    let pool = sqlx::SqlitePool::connect_with(opts).await.expect("open");
    let n = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
        .fetch_one(&pool)
        .await
        .expect("count");
    pool.close().await;
    n
}

async fn run_mode(
    dir: &Path,
    mode: StoreMode,
    links: &Arc<LinkMap>,
    plan: &Plan,
    frames: &[Vec<u8>],
    metrics: Option<Metrics>,
) {
    let db = dir.join(format!("{}.db", mode.to_string().replace(':', "-")));
    let store = Store::open(&db).await.expect("open");
    let opts = Options {
        store: mode,
        metrics,
        // A minute of probes replayed in seconds: their send times cannot
        // all lie near the arrival.
        plausible: Plausibility::any_time(),
        ..Options::default()
    };
    let start = Instant::now();
    let c = Collector::start(store, links.clone(), plan, opts)
        .await
        .expect("start");
    let intake = c.intake();
    for f in frames {
        intake.submit_frame(f).await.expect("a valid probe");
    }
    drop(intake);
    let s = c.shutdown().await.expect("stored");
    let secs = start.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    let per_day = bytes as f64 * 86_400.0 / SECONDS as f64;
    println!(
        "--store {mode:<10} {:>7.0} k hop records/s  probes kept {:>6} of {}  link_buckets {:>6}  \
         path_buckets {:>5}  file {:>6.1} MB  = {:>6.1} GB/day at {RATE} probes/s/path",
        s.hops as f64 / secs / 1e3,
        s.raw_probes,
        s.probes,
        count(&db, "link_buckets").await,
        count(&db, "path_buckets").await,
        bytes as f64 / 1e6,
        per_day / 1e9,
    );
}

fn scrape_cost(m: &Metrics) {
    let text = m.encode();
    let series = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .count();
    let n = 200;
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(m.encode());
    }
    let per = start.elapsed() / n;
    println!(
        "/metrics encode: {:.2} ms per scrape, {series} series, {:.0} kB",
        per.as_secs_f64() * 1e3,
        text.len() as f64 / 1e3
    );
}

fn main() {
    let topo = Topology::load("fattree:k=8").expect("topology");
    let links = Arc::new(LinkMap::from_topology(&topo));
    let opts = intpath_planner::PlanOptions {
        directed: true,
        ..Default::default()
    };
    let plan = intpath_planner::plan(&topo, &opts).expect("plan");
    let frames = frames(&links, &plan);
    println!(
        "fattree:k=8 directed: {} paths, {} links, {} probes ({} s at {RATE}/s per path)",
        plan.paths.len(),
        links.links().len(),
        frames.len(),
        SECONDS
    );
    let dir = std::env::temp_dir().join(format!("intpath-volume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let metrics = Metrics::default();
    for mode in ["raw", "sampled:10", "sampled:100", "buckets"] {
        let mode: StoreMode = mode.parse().expect("mode");
        let m = (mode == StoreMode::Raw).then(|| metrics.clone());
        rt.block_on(run_mode(&dir, mode, &links, &plan, &frames, m));
    }
    scrape_cost(&metrics);
    let _ = std::fs::remove_dir_all(&dir);
    std::thread::sleep(Duration::from_millis(10));
}
