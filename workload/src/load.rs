//! Open-loop load: requests arrive as a Poisson process (exponential gaps at
//! the given rate) whether or not earlier ones have answered, so a slow
//! service shows up as latency, not as a lower offered rate.

use crate::client::HttpClient;
use crate::config::{Mix, RequestKind};
use crate::services::HOTELS;
use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

#[derive(Debug, Clone)]
pub struct LoadConfig {
    pub frontend: SocketAddr,
    /// Mean arrivals per second.
    pub rate: f64,
    pub duration: Duration,
    pub mix: Mix,
    /// Seed of the arrivals and parameters, for a repeatable run.
    pub seed: u64,
    pub timeout: Duration,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LoadError {
    #[error("rate {0} is not a positive number of requests per second")]
    BadRate(f64),
    #[error("duration must be positive")]
    NoDuration,
}

/// What a run did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    pub requests: u64,
    pub errors: u64,
    pub by_kind: BTreeMap<RequestKind, u64>,
    pub seconds: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The first failure, to say why there were errors.
    pub first_error: Option<String>,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds: Vec<String> = self
            .by_kind
            .iter()
            .map(|(k, n)| format!("{}={n}", k.name()))
            .collect();
        writeln!(
            f,
            "requests {} ({}) in {:.1} s ({:.1}/s), errors {}",
            self.requests,
            kinds.join(" "),
            self.seconds,
            self.requests as f64 / self.seconds.max(1e-9),
            self.errors
        )?;
        write!(
            f,
            "latency ms: p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}",
            self.p50_ms, self.p90_ms, self.p99_ms, self.max_ms
        )?;
        if let Some(e) = &self.first_error {
            write!(f, "\nfirst error: {e}")?;
        }
        Ok(())
    }
}

/// The frontend path of one request of `kind`, with random parameters.
fn request_path(kind: RequestKind, rng: &mut StdRng) -> String {
    match kind {
        RequestKind::Search => format!(
            "/hotels?lat={:.4}&lon={:.4}",
            rng.gen_range(37.7..37.9),
            rng.gen_range(-122.5..-122.3)
        ),
        RequestKind::Profile => format!("/profile?hotels={}", rng.gen_range(0..HOTELS)),
        RequestKind::Reserve => format!(
            "/reserve?hotel={}&nights={}",
            rng.gen_range(0..HOTELS),
            rng.gen_range(1..=7)
        ),
    }
}

/// Offers `cfg.rate` requests/s for `cfg.duration`, then waits for the
/// answers (each bounded by `cfg.timeout`).
pub async fn run(cfg: &LoadConfig) -> Result<Summary, LoadError> {
    if !(cfg.rate.is_finite() && cfg.rate > 0.0) {
        return Err(LoadError::BadRate(cfg.rate));
    }
    if cfg.duration.is_zero() {
        return Err(LoadError::NoDuration);
    }
    let weights = cfg.mix.weights();
    // Mix guarantees a positive weight, so the index always builds.
    let pick = WeightedIndex::new(weights.iter().map(|(_, w)| *w))
        .map_err(|_| LoadError::BadRate(cfg.rate))?;
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let client = HttpClient::new(cfg.timeout);
    let mut tasks = JoinSet::new();
    let mut by_kind = BTreeMap::new();
    let start = Instant::now();
    let mut at = Duration::ZERO;
    let mut next_progress = Duration::from_secs(5);
    loop {
        // Exponential gap: -ln(U)/rate with U in (0, 1].
        let u: f64 = 1.0 - rng.gen::<f64>();
        at += Duration::from_secs_f64(-u.ln() / cfg.rate);
        if at >= cfg.duration {
            break;
        }
        if at >= next_progress {
            tracing::info!("{:.0} s: {} requests sent", at.as_secs_f64(), tasks.len());
            next_progress += Duration::from_secs(5);
        }
        tokio::time::sleep_until((start + at).into()).await;
        let kind = weights[pick.sample(&mut rng)].0;
        *by_kind.entry(kind).or_insert(0) += 1;
        let path = request_path(kind, &mut rng);
        let (client, frontend) = (client.clone(), cfg.frontend);
        tasks.spawn(async move {
            let t0 = Instant::now();
            let r = client.get(frontend, &path, http::HeaderMap::new()).await;
            (t0.elapsed(), r.err().map(|e| e.to_string()))
        });
    }
    let mut latencies = Vec::with_capacity(tasks.len());
    let (mut errors, mut first_error) = (0, None);
    while let Some(done) = tasks.join_next().await {
        let Ok((lat, err)) = done else {
            errors += 1;
            continue;
        };
        latencies.push(lat.as_secs_f64() * 1e3);
        if let Some(e) = err {
            errors += 1;
            first_error.get_or_insert(e);
        }
    }
    latencies.sort_by(f64::total_cmp);
    let q = |p: f64| percentile(&latencies, p);
    Ok(Summary {
        requests: by_kind.values().sum(),
        errors,
        by_kind,
        seconds: start.elapsed().as_secs_f64(),
        p50_ms: q(0.50),
        p90_ms: q(0.90),
        p99_ms: q(0.99),
        max_ms: latencies.last().copied().unwrap_or(0.0),
        first_error,
    })
}

/// Nearest-rank percentile of sorted values; 0 for none.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&v, 1.0), 100.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    #[tokio::test]
    async fn bad_rate_and_duration_are_errors() {
        let mut cfg = LoadConfig {
            frontend: "127.0.0.1:9".parse().unwrap(),
            rate: f64::NAN,
            duration: Duration::from_secs(1),
            mix: Mix::default(),
            seed: 1,
            timeout: Duration::from_secs(1),
        };
        assert!(matches!(run(&cfg).await, Err(LoadError::BadRate(_))));
        cfg.rate = 10.0;
        cfg.duration = Duration::ZERO;
        assert_eq!(run(&cfg).await, Err(LoadError::NoDuration));
    }
}
