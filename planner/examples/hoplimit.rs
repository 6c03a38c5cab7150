//! Balance under the hop limit (BENCHMARKS.md, "Planner", "Balance under
//! the hop limit"): per fabric the links, the lower bound, `euler`'s and
//! `balanced`'s path count and longest path, and the longest against the
//! ideal `ceil(links / paths)`; then random graph families over many
//! seeds: how many plans were over the bound, or over 1.25 × the ideal.
//!
//!     cargo run --release -p intpath-planner --example hoplimit [-- HOPS [SEEDS]]
//!
//! With `sweep N [DEGREE_LO DEGREE_HI] [any] [seed=S]` instead, N random graphs of
//! the property test's family (tests/balance.rs: 10–40 odd switches, 20–200
//! switches, average degree 4–12 unless given), at HOPS 44 or with `any`
//! at a limit from 4 to 44; each plan over the bound or over 1.25 × the
//! ideal is printed:
//!
//!     cargo run --release -p intpath-planner --example hoplimit -- sweep 20000
//!
//! Every plan is checked (walks, coverage, hop limit) before it counts.

use intpath_core::topo::Topology;
use intpath_planner::{check, plan, Algo, CheckOptions, PlanOptions};

struct Row {
    paths: usize,
    bound: usize,
    longest: usize,
    ideal: usize,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.longest as f64 / self.ideal as f64
    }
}

fn run(t: &Topology, algo: Algo, hops: usize) -> Row {
    let o = PlanOptions {
        algo,
        max_hops: Some(hops),
        ..PlanOptions::default()
    };
    let p = plan(t, &o).expect("plan");
    let co = CheckOptions {
        max_links: Some(hops),
        directed: Some(false),
        include_hosts: Some(false),
    };
    if let Err(e) = check(t, &p, &co) {
        panic!("{}: {e}", t.origin());
    }
    let links: usize = p.paths.iter().map(|q| q.len()).sum();
    Row {
        paths: p.paths.len(),
        bound: p.stats.lower_bound,
        longest: p.stats.max_len,
        ideal: links.div_ceil(p.paths.len().max(1)).max(1),
    }
}

/// The property test's random family, from a seeded generator.
fn sweep(count: usize, degree: (usize, usize), any: bool, seed: u64) {
    let mut x = 0x2545_F491_4F6C_DD1Du64 ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rnd = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let (mut plans, mut failures) = (0, 0);
    for _ in 0..count {
        let odd = 2 * (5 + rnd(16));
        let n = odd.max(20) + rnd(181);
        // Twice the average degree, so that half degrees count too.
        let degree2 = 2 * degree.0 + rnd(2 * (degree.1 - degree.0) + 1);
        let m = (n * degree2 / 4).clamp(n - 1, n * (n - 1) / 2);
        let hops = if any { 4 + rnd(41) } else { 44 };
        let spec = format!("random:n={n},m={m},odd={odd},seed={}", rnd(65536));
        let Ok(t) = Topology::load(&spec) else {
            continue;
        };
        let b = run(&t, Algo::Balanced, hops);
        plans += 1;
        if b.paths > b.bound || b.longest * 4 > b.ideal * 5 {
            failures += 1;
            println!(
                "{spec} at {hops}: {} paths (bound {}), longest {} (ideal {}), {} links",
                b.paths,
                b.bound,
                b.longest,
                b.ideal,
                t.switch_links().count()
            );
        }
    }
    println!("{plans} plans, {failures} over the bound or over 1.25 × the ideal");
}

fn main() {
    let mut args = std::env::args().skip(1);
    if std::env::args().nth(1).as_deref() == Some("sweep") {
        let rest: Vec<String> = args.skip(1).collect();
        let count = rest.first().map_or(1000, |s| s.parse().expect("N"));
        let any = rest.iter().any(|a| a == "any");
        let seed = rest
            .iter()
            .find_map(|a| a.strip_prefix("seed="))
            .map_or(0, |s| s.parse().expect("seed=N"));
        let nums: Vec<usize> = rest[1.min(rest.len())..]
            .iter()
            .filter_map(|a| a.parse().ok())
            .collect();
        let degree = match nums[..] {
            [lo, hi, ..] => (lo, hi),
            _ => (4, 12),
        };
        sweep(count, degree, any, seed);
        return;
    }
    let hops: usize = args.next().map_or(44, |s| s.parse().expect("HOPS"));
    let seeds: u64 = args.next().map_or(100, |s| s.parse().expect("SEEDS"));
    println!("hop limit {hops}\n");
    println!("| topology | links | bound | euler: paths, longest | balanced: paths, longest | ideal | longest / ideal |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut fabrics: Vec<String> = (6..=16)
        .step_by(2)
        .map(|k| format!("fattree:k={k}"))
        .collect();
    for (s, l) in [
        (2, 8),
        (3, 7),
        (4, 9),
        (5, 12),
        (6, 15),
        (7, 20),
        (8, 31),
        (9, 40),
    ] {
        fabrics.push(format!("leafspine:spines={s},leaves={l},hosts=1"));
    }
    fabrics.push("random:n=80,m=200,odd=20,seed=1".into());
    for spec in &fabrics {
        let t = Topology::load(spec).expect("generator");
        let e = run(&t, Algo::Euler, hops);
        let b = run(&t, Algo::Balanced, hops);
        println!(
            "| {spec} | {} | {} | {}, {} | {}, {} | {} | {:.2} |",
            t.switch_links().count(),
            b.bound,
            e.paths,
            e.longest,
            b.paths,
            b.longest,
            b.ideal,
            b.ratio(),
        );
    }
    println!("\nrandom graphs, {seeds} seeds each (balanced)\n");
    println!("| family | average degree | over the bound | over 1.25 × ideal | longest / ideal: median | worst |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (n, m, odd) in [
        (80, 200, 20),
        (40, 80, 10),
        (100, 250, 30),
        (120, 300, 40),
        (60, 300, 20),
        (100, 400, 30),
        (200, 900, 40),
        (150, 1200, 10),
        (300, 2000, 24),
        (100, 150, 20),
        (150, 200, 40),
    ] {
        let mut over = 0;
        let mut bad = 0;
        let mut ratios = Vec::new();
        for seed in 0..seeds {
            let spec = format!("random:n={n},m={m},odd={odd},seed={seed}");
            let Ok(t) = Topology::load(&spec) else {
                continue;
            };
            let b = run(&t, Algo::Balanced, hops);
            over += usize::from(b.paths > b.bound);
            bad += usize::from(b.longest * 4 > b.ideal * 5);
            ratios.push(b.ratio());
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "| random:n={n},m={m},odd={odd} | {:.1} | {over} | {bad} | {:.2} | {:.2} |",
            2.0 * m as f64 / n as f64,
            ratios[ratios.len() / 2],
            ratios[ratios.len() - 1]
        );
    }
}
