//! Loading topology files of every format at 10^3..10^5 switches, warm:
//! the same file loaded again and again, so a small topology stays in the
//! cache between loads (see `load_cold` for loads as a fresh process makes
//! them).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use intpath_core::topo::Topology;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    for n in common::SIZES {
        group.throughput(Throughput::Elements(common::elements(n) as u64));
        for (format, path) in common::write_files(dir.path(), n) {
            let spec = path.to_str().expect("utf-8 path").to_owned();
            group.bench_with_input(BenchmarkId::new(format, n), &spec, |b, spec| {
                b.iter(|| Topology::load(spec).expect("load"))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
