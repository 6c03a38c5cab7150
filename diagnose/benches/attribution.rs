//! Attribution speed: RPC edges attributed per second on one core, from a
//! synthetic HotelReservation workload on a k=4 fat tree (goal ≥ 100k/s).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use intpath_core::topo::Topology;
use intpath_diagnose::attribution::{attribute, attribute_with_clocks, Options};
use intpath_diagnose::culprits::{rank, Method};
use intpath_diagnose::path::HostPath;
use intpath_diagnose::synth::{generate, App, Config};
use intpath_diagnose::{diagnose, Request};

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cfg = Config {
        topo: Topology::load("fattree:k=4").expect("topology"),
        app: App::Hotel,
        faults: vec!["link:auto:5".parse().expect("fault")],
        seed: 7,
        requests: 10_000,
        rate: 500.0,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    };
    generate(&cfg).expect("synth");
    let d = diagnose(Request::synth_output(dir.path(), cfg.topo.clone())).expect("diagnose");
    let paths: Vec<Option<&HostPath>> = d.paths.iter().map(Some).collect();
    let hosts = d.host_names();
    let mut g = c.benchmark_group("diagnose");
    g.throughput(Throughput::Elements(d.edges.len() as u64));
    g.bench_function("attribute", |b| {
        b.iter(|| attribute(&d.edges, &paths, &d.index, &d.evidence, &Options::default()))
    });
    g.bench_function("attribute+clocks+rank", |b| {
        b.iter(|| {
            let (attr, _) =
                attribute_with_clocks(&d.edges, &paths, &d.index, &d.evidence, &Options::default());
            let mut inputs = d.ranking_inputs(&paths, &hosts);
            inputs.attr = &attr;
            rank(&inputs, Method::Diagnose)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
