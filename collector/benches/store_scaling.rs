//! Hop records per second into SQLite and into PostgreSQL (probe rows by
//! COPY, and by multi-row INSERT), from 1, 2 and 4 collectors writing at
//! once, side by side in one run.
//!
//! `cargo bench -p intpath-collector --bench store_scaling` starts its own
//! PostgreSQL server (scripts/pg-test-server.sh, loopback, a temporary
//! directory), or uses the one `INTPATH_TEST_PG` names (the same script's),
//! and gives every measurement a fresh database. Each collector
//! is a thread with its own runtime, store connection and aggregator, as a
//! separate collector process would be; each sinks its own path (41
//! switches, 41 hop records per probe) over the same links, so every
//! collector merges into the same link buckets. Times count aggregation and
//! store transactions of 100,000 hop records, as `benches/collector.rs` does
//! for one SQLite writer.
//!
//! `INTPATH_BENCH_HOPS=N` stores N hop records per collector instead of two
//! million (in transactions of at most 100,000): scripts/test.sh runs the
//! debug build with a small N so the bench cannot rot unnoticed.

mod common;

use intpath_collector::capture::{Collector, Options};
use intpath_collector::ingest::Aggregator;
use intpath_collector::parse::Probe;
use intpath_collector::parse_frame;
use intpath_collector::synth::{finished_probe, Conditions};
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_store::links::{Cable, LinkMap};
use intpath_store::Store;
use intpath_store::{Db, ProbeLoad};
use intpath_test_support::postgres::{self as pg, fresh_database_on, PrivateServer};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const SWITCHES: u32 = 41;
const HOPS_PER_COLLECTOR: usize = 2_000_000;
const BATCH_HOPS: usize = 100_000;
/// Overrides [`HOPS_PER_COLLECTOR`].
const HOPS_ENV: &str = "INTPATH_BENCH_HOPS";

/// How much each collector stores: hop records in all, and per transaction.
#[derive(Clone, Copy)]
struct Size {
    hops: usize,
    batch: usize,
}

impl Size {
    fn from_env() -> Self {
        let hops = match std::env::var(HOPS_ENV) {
            Ok(v) => v
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .unwrap_or_else(|| panic!("{HOPS_ENV}={v}: not a positive number")),
            Err(_) => HOPS_PER_COLLECTOR,
        };
        Self {
            hops,
            batch: hops.min(BATCH_HOPS),
        }
    }
}

fn chain() -> LinkMap {
    let name = |i: u32| format!("s{i}");
    let mut cables: Vec<Cable> = (1..SWITCHES)
        .map(|i| Cable::new(&name(i), 2, &name(i + 1), 1))
        .collect();
    cables.push(Cable::new(&name(SWITCHES), 3, "collector", 0));
    LinkMap::new((1..=SWITCHES).map(|i| (name(i), i)), cables).expect("chain")
}

fn plan(collectors: u16) -> Plan {
    Plan {
        topology: "chain:41".into(),
        algo: "bench".into(),
        paths: (1..=collectors)
            .map(|id| ProbePath {
                id,
                nodes: (1..=SWITCHES).map(|i| format!("s{i}").into()).collect(),
                egress_ports: vec![2; SWITCHES as usize - 1],
            })
            .collect(),
        stats: PlanStats::default(),
    }
}

/// 1,024 parsed probes of `path`.
fn probes(links: &LinkMap, path: &ProbePath) -> Vec<Probe> {
    (0..1024)
        .map(|seq| {
            let q = move |l: u32| (l * 7 + seq) % 50;
            let c = Conditions {
                sequence: seq,
                send_ns: 1_700_000_000_000_000_000 + u64::from(seq) * 1_000_000,
                qdepth: &q,
                sink_port: 3,
            };
            let frame = finished_probe(path, links, &c).to_bytes().expect("probe");
            parse_frame(&frame, 1).expect("parses")
        })
        .collect()
}

/// One collector's writer: aggregates and stores `size.hops` records.
async fn write(
    db: Db,
    load: ProbeLoad,
    size: Size,
    run: i64,
    links: Arc<LinkMap>,
    probes: Vec<Probe>,
) {
    let store = Store::open(db).await.expect("open").with_probe_load(load);
    let mut agg = Aggregator::new(links, 100_000_000);
    let (mut hops, mut round) = (0usize, 0u32);
    'outer: loop {
        for p in &probes {
            agg.add(common::in_round(p, round, 1_100_000_000));
            if agg.pending_hops() >= size.batch {
                hops += agg.pending_hops();
                store.write(run, &agg.take(), &[]).await.expect("write");
                if hops >= size.hops {
                    break 'outer;
                }
            }
        }
        round += 1;
    }
    store.close().await;
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// M hop records/s from `n` collectors into `db`.
fn measure(db: &Db, load: ProbeLoad, size: Size, n: u16) -> f64 {
    let links = Arc::new(chain());
    let plan = plan(n);
    // The run all collectors share, as `collect --run-key` makes it.
    let run = runtime().block_on(async {
        let store = Store::open(db).await.expect("open");
        let opts = Options {
            run_key: Some(format!("bench-{n}")),
            ..Options::default()
        };
        let c = Collector::start(store, links.clone(), &plan, opts)
            .await
            .expect("run");
        let run = c.run_id();
        c.shutdown().await.expect("shutdown");
        run
    });
    let start = Arc::new(Barrier::new(usize::from(n) + 1));
    let threads: Vec<_> = plan
        .paths
        .iter()
        .map(|p| {
            let (db, links, start) = (db.clone(), links.clone(), start.clone());
            let probes = probes(&links, p);
            std::thread::spawn(move || {
                let rt = runtime();
                start.wait();
                rt.block_on(write(db, load, size, run, links, probes));
            })
        })
        .collect();
    start.wait();
    let t = Instant::now();
    for th in threads {
        th.join().expect("collector thread");
    }
    let s = t.elapsed().as_secs_f64();
    // Each collector stops at the first whole batch that reaches its share.
    let hops = usize::from(n) * size.hops.div_ceil(size.batch) * size.batch;
    hops as f64 / s / 1e6
}

fn main() {
    let size = Size::from_env();
    let dir = tempfile::tempdir().expect("temp dir");
    // Stopped when dropped, at the end.
    let private: PrivateServer;
    let server = match std::env::var(pg::ENV) {
        Ok(url) => url,
        Err(_) => {
            private = PrivateServer::start();
            private.url.clone()
        }
    };
    let fresh = |tag: &str| Db::Postgres(runtime().block_on(fresh_database_on(&server, tag)));
    println!(
        "hop records/s (millions), {SWITCHES}-switch probes, {} records per collector in \
         transactions of {}",
        size.hops, size.batch
    );
    println!(
        "{:>10}  {:>10}  {:>14}  {:>14}",
        "collectors", "SQLite", "PG COPY", "PG INSERT"
    );
    for n in [1u16, 2, 4] {
        let lite = Db::Sqlite(dir.path().join(format!("bench-{n}.db")));
        let l = measure(&lite, ProbeLoad::Copy, size, n);
        let copy = measure(&fresh("bench_copy"), ProbeLoad::Copy, size, n);
        let insert = measure(&fresh("bench_insert"), ProbeLoad::Insert, size, n);
        println!("{n:>10}  {l:>10.2}  {copy:>14.2}  {insert:>14.2}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
