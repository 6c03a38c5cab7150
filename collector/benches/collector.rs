//! Parse rate and sustained store rate, on one core each.
//!
//! `cargo bench -p intpath-collector` prints probes/s and hop records/s for
//! short (5 switches) and long (41 switches) probes, parsed from whole
//! Ethernet frames and checked against the plan, then the rate at which the
//! writer's aggregation plus SQLite transactions absorb hop records.

mod common;

use intpath_collector::ingest::Aggregator;
use intpath_collector::synth::{finished_probe, Conditions};
use intpath_collector::{parse_frame, Validator};
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_store::links::{Cable, LinkMap};
use intpath_store::Store;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A chain of `n` switches, port 2 rightwards and 1 leftwards, a collector on
/// the last one's port 3.
fn chain(n: u32) -> LinkMap {
    let name = |i: u32| format!("s{i}");
    let mut cables: Vec<Cable> = (1..n)
        .map(|i| Cable::new(&name(i), 2, &name(i + 1), 1))
        .collect();
    cables.push(Cable::new(&name(n), 3, "collector", 0));
    LinkMap::new((1..=n).map(|i| (name(i), i)), cables).expect("chain")
}

fn path(id: u16, switches: u32) -> ProbePath {
    ProbePath {
        id,
        nodes: (1..=switches).map(|i| format!("s{i}").into()).collect(),
        egress_ports: vec![2; switches as usize - 1],
    }
}

/// Send time of sequence number 0.
const T0: u64 = 1_700_000_000_000_000_000;
/// When the collector receives every probe: within the send-time window of
/// each of up to 5,000 probes sent 1 ms apart.
const RECV_NS: u64 = T0 + 5_000_000_000;

fn frames(links: &LinkMap, p: &ProbePath, n: u32) -> Vec<Vec<u8>> {
    (0..n)
        .map(|seq| {
            let q = move |l: u32| (l * 7 + seq) % 50;
            let c = Conditions {
                sequence: seq,
                send_ns: T0 + u64::from(seq) * 1_000_000,
                qdepth: &q,
                sink_port: 3,
            };
            finished_probe(p, links, &c).to_bytes().expect("probe")
        })
        .collect()
}

fn bench_parse(name: &str, links: &LinkMap, plan: &Plan, frames: &[Vec<u8>]) {
    let v = Validator::new(plan, links).expect("plan fits");
    let hops_per = parse_frame(&frames[0], 0).expect("parses").records.len();
    let mut probes = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        for f in frames {
            let p = parse_frame(f, RECV_NS).expect("parses");
            v.check(&p).expect("valid");
            black_box(p);
        }
        probes += frames.len() as u64;
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "parse+validate {name}: {:.2} M probes/s, {:.2} M hop records/s ({hops_per} records/probe)",
        probes as f64 / s / 1e6,
        (probes * hops_per as u64) as f64 / s / 1e6
    );
}

async fn bench_store(links: Arc<LinkMap>, plan: &Plan, frames: &[Vec<u8>], total_hops: usize) {
    let dir = std::env::temp_dir().join(format!("intpath-col-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = dir.join("bench.db");
    let store = Store::open(&db).await.expect("open");
    let run = store
        .begin_run(&links, plan, 100_000_000, None)
        .await
        .expect("run");
    let mut agg = Aggregator::new(links, 100_000_000);
    let probes: Vec<_> = frames
        .iter()
        .map(|f| parse_frame(f, 1).expect("parses"))
        .collect();
    let batch_hops = 100_000;
    let (mut hops, mut batches) = (0usize, 0u32);
    let mut writing = Duration::ZERO;
    let start = Instant::now();
    'outer: loop {
        for p in &probes {
            agg.add(common::in_round(p, batches, 3_000_000_000));
            if agg.pending_hops() >= batch_hops {
                hops += agg.pending_hops();
                let batch = agg.take();
                let t = Instant::now();
                store.write(run, &batch, &[]).await.expect("write");
                writing += t.elapsed();
                batches += 1;
                if hops >= total_hops {
                    break 'outer;
                }
            }
        }
    }
    let s = start.elapsed().as_secs_f64();
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(dir.join("bench.db-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    println!(
        "store: {hops} hop records in {batches} transactions of {batch_hops}: {:.0} k hop records/s \
         ({:.1} s, {:.1} s of it in SQLite transactions, database {:.0} MB)",
        hops as f64 / s / 1e3,
        s,
        writing.as_secs_f64(),
        size as f64 / 1e6
    );
    store.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let links = chain(41);
    let plan = Plan {
        topology: "chain:41".into(),
        algo: "bench".into(),
        paths: vec![path(1, 5), path(2, 41)],
        stats: PlanStats::default(),
    };
    let short = frames(&links, &plan.paths[0], 4096);
    let long = frames(&links, &plan.paths[1], 1024);
    bench_parse("5-switch probes", &links, &plan, &short);
    bench_parse("41-switch probes", &links, &plan, &long);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(bench_store(Arc::new(links), &plan, &long, 5_000_000));
}
