//! Planning time on data-centre fabrics and large random graphs.

use criterion::{criterion_group, criterion_main, Criterion};

fn planning(_c: &mut Criterion) {}

criterion_group!(benches, planning);
criterion_main!(benches);
