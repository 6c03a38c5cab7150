//! Planning time on data-centre fabrics and large random graphs, default
//! options (hop limit from MTU 1500). Results in BENCHMARKS.md ("Planner").

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use intpath_core::topo::Topology;
use intpath_planner::{plan, Algo, PlanOptions};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion, group: &str, specs: &[String], algos: &[Algo]) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for spec in specs {
        let t = Topology::load(spec).expect("generator");
        g.throughput(Throughput::Elements(t.switch_links().count() as u64));
        for &algo in algos {
            let o = PlanOptions {
                algo,
                ..PlanOptions::default()
            };
            g.bench_with_input(BenchmarkId::new(algo.name(), spec), &t, |b, t| {
                b.iter(|| black_box(plan(t, &o).expect("plan")))
            });
        }
    }
    g.finish();
}

fn fattree(c: &mut Criterion) {
    let specs: Vec<String> = [4, 8, 16, 24, 32, 48, 64]
        .iter()
        .map(|k| format!("fattree:k={k}"))
        .collect();
    bench(
        c,
        "fattree",
        &specs,
        &[Algo::Euler, Algo::Balanced, Algo::Dfs],
    );
}

fn leafspine(c: &mut Criterion) {
    let specs: Vec<String> = [64, 128, 256, 512]
        .iter()
        .map(|l| format!("leafspine:spines=16,leaves={l},hosts=1"))
        .collect();
    bench(c, "leafspine", &specs, &[Algo::Euler, Algo::Balanced]);
}

fn random(c: &mut Criterion) {
    // Average degree 10, every other switch odd: many paths to balance.
    let specs: Vec<String> = [10_000, 100_000, 1_000_000]
        .iter()
        .map(|m| format!("random:n={},m={m},odd={},seed=1", m / 5, m / 10))
        .collect();
    bench(c, "random", &specs, &[Algo::Euler, Algo::Balanced]);
}

criterion_group!(benches, fattree, leafspine, random);
criterion_main!(benches);
