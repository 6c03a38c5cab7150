//! Pirate's part of `intpath eval diagnose` (`--only pirate` alone): the
//! response-latency estimates scored against the client's own
//! request-to-response times over server delays × windows × loads, on
//! simulated timings ([`super::sim`]).

use crate::synth::packets::{simulate, Scenario};
use intpath_diagnose::latency::{analyse_segments, Config};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Server delays (ms), windows and server loads Pirate is scored over.
const PIRATE_DELAYS_MS: [u64; 3] = [1, 3, 10];
const PIRATE_WINDOWS: [usize; 3] = [1, 4, 16];
const PIRATE_LOADS: [f64; 3] = [0.0, 0.1, 0.3];

/// One Pirate scenario scored.
#[derive(Debug, Clone, PartialEq)]
pub struct PirateRow {
    pub delay_ms: u64,
    pub window: usize,
    pub load: f64,
    pub seed: u64,
    /// Per epoch: |estimate − client mean| / client mean.
    pub errors: Vec<f64>,
    pub estimate_us: f64,
    pub truth_us: f64,
    /// Segments analysed per second of analysis time.
    pub segments_per_s: f64,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Simulates every scenario `seeds` times (5 one-second epochs each) and
/// scores each epoch's estimate against the mean latency the client
/// measured for the requests it sent in that epoch.
pub fn run(seeds: u64) -> Vec<PirateRow> {
    let cfg = Config::default();
    let epoch_ns = 1_000_000_000;
    let mut out = Vec::new();
    for delay_ms in PIRATE_DELAYS_MS {
        for window in PIRATE_WINDOWS {
            for load in PIRATE_LOADS {
                for seed in 1..=seeds.max(1) {
                    let sim = simulate(&Scenario {
                        server_delay: std::time::Duration::from_millis(delay_ms),
                        window,
                        load,
                        jitter: 0.0,
                        duration: std::time::Duration::from_secs(5),
                        seed,
                    });
                    let started = std::time::Instant::now();
                    let rows = analyse_segments(&sim.segments, &cfg);
                    let secs = started.elapsed().as_secs_f64();
                    let (mut errors, mut est, mut truth) = (Vec::new(), Vec::new(), Vec::new());
                    for r in &rows {
                        let Some(e) = r.result.estimate else { continue };
                        let lat: Vec<f64> = sim
                            .truth
                            .iter()
                            .filter(|(t, _)| {
                                (r.epoch_start_ns..r.epoch_start_ns + epoch_ns).contains(t)
                            })
                            .map(|(_, l)| *l)
                            .collect();
                        if lat.is_empty() {
                            continue;
                        }
                        let t = lat.iter().sum::<f64>() / lat.len() as f64;
                        errors.push((e.latency_ns - t).abs() / t);
                        est.push(e.latency_ns);
                        truth.push(t);
                    }
                    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64 / 1e3;
                    out.push(PirateRow {
                        delay_ms,
                        window,
                        load,
                        seed,
                        errors,
                        estimate_us: mean(&est),
                        truth_us: mean(&truth),
                        segments_per_s: sim.segments.len() as f64 / secs.max(1e-9),
                    });
                }
            }
        }
    }
    out
}

/// Writes `pirate.csv` in `dir`: per scenario and seed, then the median
/// over every epoch.
pub fn write(dir: &Path, rows: &[PirateRow]) -> std::io::Result<PathBuf> {
    let mut text = String::from(
        "delay_ms,window,load,seed,epochs,median_rel_err,max_rel_err,estimate_us,client_us,segments_per_s\n",
    );
    for r in rows {
        let mut e = r.errors.clone();
        let _ = writeln!(
            text,
            "{},{},{},{},{},{:.4},{:.4},{:.1},{:.1},{:.0}",
            r.delay_ms,
            r.window,
            r.load,
            r.seed,
            e.len(),
            median(&mut e),
            e.iter().copied().fold(0.0, f64::max),
            r.estimate_us,
            r.truth_us,
            r.segments_per_s
        );
    }
    let mut all: Vec<f64> = rows.iter().flat_map(|r| r.errors.iter().copied()).collect();
    let overall = median(&mut all);
    let _ = writeln!(text, "all,,,,{},{overall:.4},,,,", all.len());
    tracing::info!(
        "eval diagnose: pirate median relative error {:.2} % over {} epochs",
        overall * 100.0,
        all.len()
    );
    let p = dir.join("pirate.csv");
    std::fs::write(&p, text)?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pirate_is_within_a_percent_and_a_half_in_every_cell_of_the_simulated_matrix() {
        let rows = run(1);
        assert_eq!(rows.len(), 27);
        let mut all = Vec::new();
        for r in &rows {
            let mut e = r.errors.clone();
            all.extend_from_slice(&e);
            let m = median(&mut e);
            assert!(
                m < 0.015,
                "{} ms, window {}, load {}: median relative error {m:.4} (estimate {:.1} µs, client {:.1} µs)",
                r.delay_ms,
                r.window,
                r.load,
                r.estimate_us,
                r.truth_us
            );
        }
        let m = median(&mut all);
        assert!(m < 0.01, "median relative error {m} over {}", all.len());
    }
}
