//! Planning time on data-centre fabrics and large random graphs, default
//! options (hop limit from MTU 1500). Results in BENCHMARKS.md ("Planner").
//!
//! The `reference` group sets `balanced` against the linear Python
//! reference (`benches/reference.py`, the Euler plan in plain Python) on
//! the same fat trees, both timed in the same run, and prints the ratio:
//!
//!     cargo bench -p intpath-planner --bench planner -- reference

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use intpath_core::topo::Topology;
use intpath_planner::{plan, Algo, PlanOptions};
use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

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

/// This thread's CPU time in ms: on a loaded machine wall time also
/// counts the time other processes had the core.
fn cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for clock_gettime to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// Timings in ms: best and median wall time, median CPU time.
#[derive(Clone, Copy)]
struct Times {
    best: f64,
    median: f64,
    cpu: f64,
}

fn timed(runs: usize, mut f: impl FnMut()) -> Times {
    let mut wall = Vec::with_capacity(runs);
    let mut cpu = Vec::with_capacity(runs);
    for _ in 0..runs {
        let (started, c0) = (Instant::now(), cpu_ms());
        f();
        wall.push(started.elapsed().as_secs_f64() * 1e3);
        cpu.push(cpu_ms() - c0);
    }
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    Times {
        best: wall[0],
        median: wall[runs / 2],
        cpu: cpu[runs / 2],
    }
}

/// The Python reference's timings for `spec` (`None` without python3).
fn python(spec: &str, reps: usize) -> Option<Times> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/reference.py");
    let out = Command::new("python3")
        .args([script, spec, "--reps", &reps.to_string()])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| -> Option<f64> {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .and_then(|v| v.parse().ok())
    };
    Some(Times {
        best: field("best_ms=")?,
        median: field("median_ms=")?,
        cpu: field("cpu_median_ms=")?,
    })
}

fn reference(_: &mut Criterion) {
    // Criterion's filter is not public: the first free argument is it.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = args.iter().find(|a| !a.starts_with('-'));
    if filter.is_some_and(|f| !"reference/fattree".contains(f.as_str()))
        || args.iter().any(|a| a == "--test" || a == "--list")
    {
        return;
    }
    for k in [16, 32, 48] {
        let spec = format!("fattree:k={k}");
        let t = Topology::load(&spec).expect("generator");
        let o = PlanOptions::default();
        // Interleaved, three rounds: Python (5 plans), then Rust (30).
        let (mut py, mut rs) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let Some(p) = python(&spec, 5) else {
                println!("reference/{spec}: python3 not found, skipped");
                return;
            };
            py.push(p);
            rs.push(timed(30, || {
                black_box(plan(&t, &o).expect("plan"));
            }));
        }
        // Best of the bests, median of the medians.
        let sum = |v: &[Times]| {
            let mut m: Vec<f64> = v.iter().map(|x| x.median).collect();
            let mut c: Vec<f64> = v.iter().map(|x| x.cpu).collect();
            m.sort_by(f64::total_cmp);
            c.sort_by(f64::total_cmp);
            Times {
                best: v.iter().map(|x| x.best).fold(f64::MAX, f64::min),
                median: m[m.len() / 2],
                cpu: c[c.len() / 2],
            }
        };
        let (p, r) = (sum(&py), sum(&rs));
        println!(
            "reference/{spec}: balanced {:.2} / {:.2} / {:.2} ms, Python reference {:.1} / {:.1} / {:.1} ms \
             (best wall / median wall / median CPU): {:.1}x / {:.1}x / {:.1}x",
            r.best,
            r.median,
            r.cpu,
            p.best,
            p.median,
            p.cpu,
            p.best / r.best,
            p.median / r.median,
            p.cpu / r.cpu,
        );
    }
}

criterion_group!(benches, fattree, leafspine, random, reference);
criterion_main!(benches);
