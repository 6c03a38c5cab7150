//! Diagnosis speed: RPC edges analysed per second on one core, from a
//! synthetic HotelReservation workload on a k=4 fat tree (goal ≥ 100k/s),
//! the inputs loaded once (the store read is not timed).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use intpath_core::topo::Topology;
use intpath_diagnose::culprits::Method;
use intpath_diagnose::{analyze, load, Options};
use intpath_eval::synth::{self, generate, App, Config};

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cfg = Config {
        topo: Topology::load("fattree:k=4").expect("topology"),
        app: App::Hotel,
        world: intpath_eval::synth::World::default(),
        faults: vec!["link:auto:5".parse().expect("fault")],
        seed: 7,
        requests: 10_000,
        rate: 500.0,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(generate(&cfg)).expect("synth");
    let inputs = rt
        .block_on(load(&synth::request(dir.path())))
        .expect("load");
    let o = Options::default();
    let edges = analyze(&inputs, &o).expect("analyze").edges.len();
    let mut g = c.benchmark_group("diagnose");
    g.throughput(Throughput::Elements(edges as u64));
    g.bench_function("analyze", |b| b.iter(|| analyze(&inputs, &o)));
    g.bench_function("analyze+culprits", |b| {
        b.iter(|| analyze(&inputs, &o).map(|d| d.culprits(Method::Diagnose)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
