//! How the machines under the app behave: workers per service instance,
//! how much each request's work varies, and how noisy the hosts' schedulers
//! are. The default is the original synthetic world (one FIFO worker per
//! instance, quiet hosts), and draws nothing from the random streams, so
//! workloads generated before these knobs existed come out the same.

use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct World {
    /// Workers per service instance. With more than one, requests overtake
    /// each other: a later one can finish first on another worker.
    pub workers: u32,
    /// Lognormal σ of each request's work (`None`: the app's own, 0.25).
    /// With it, the work is split at random around the request's calls:
    /// most of it before them (parsing, the handler's logic), 2–10 % after
    /// the last answer (building the reply), as in real handlers; the
    /// original world splits it in halves.
    pub work_sigma: Option<f64>,
    /// Scheduling jitter: mean µs added to each packet a host sends or
    /// receives, per call its services make per request, so the hosts that
    /// make the most calls are the noisiest (heavy-tailed, Lomax α = 1.5).
    pub jitter_us: f64,
    /// A loaded machine: every host's packets get jitter whose mean swells
    /// from zero to this many µs and back, twice over the run.
    pub load_us: f64,
    /// How the services are instrumented rather than how they run: each
    /// records an INTERNAL handler span between its server span and its
    /// calls, as Express's and Spring's instrumentations do
    /// ([`super::otlp_out::with_handler_spans`]).
    pub handler_spans: bool,
    /// Each span records the worker that ran it as `thread.id`, as the
    /// Java agent does. A worker keeps the requests it takes and sends
    /// their calls itself (an event loop per worker, as in Netty or
    /// Vert.x), so a request's calls carry its thread.
    pub thread_ids: bool,
    /// Each client span names its callee as HTTP and gRPC client
    /// instrumentations do: `server.address` (the callee host's address)
    /// and `server.port` (one port per service). What tells a call nobody
    /// answered from a call to nobody in particular.
    pub peer_addresses: bool,
}

impl Default for World {
    fn default() -> Self {
        World {
            workers: 1,
            work_sigma: None,
            jitter_us: 0.0,
            load_us: 0.0,
            handler_spans: false,
            thread_ids: false,
            peer_addresses: false,
        }
    }
}

impl World {
    /// Thread pools that reorder requests: 4 workers, work spread σ = 0.6.
    pub fn pools() -> Self {
        World {
            workers: 4,
            work_sigma: Some(0.6),
            ..World::default()
        }
    }

    /// The range the share of a request's work done after its calls is
    /// drawn from; `None` in the original world (halves, nothing drawn).
    pub fn after_share(&self) -> Option<std::ops::Range<f64>> {
        self.work_sigma.map(|_| 0.02..0.1)
    }
}

/// Heavy tails with a given mean: Lomax (Pareto II) of shape 1.5, whose
/// variance is infinite; capped at 50 ms, a descheduled thread's worst.
pub fn lomax_ns(mean_ns: f64, rng: &mut impl Rng) -> i64 {
    const ALPHA: f64 = 1.5;
    if mean_ns <= 0.0 {
        return 0;
    }
    let scale = mean_ns * (ALPHA - 1.0);
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    (scale * (u.powf(-1.0 / ALPHA) - 1.0)).min(50e6) as i64
}

/// The loaded machine's level at `t_rel` ns into a run of `duration` ns:
/// 0 at the start, swelling to 1 and back twice.
pub fn load_level(t_rel: i64, duration: i64) -> f64 {
    let x = t_rel as f64 / duration.max(1) as f64;
    0.5 * (1.0 - (4.0 * std::f64::consts::PI * x).cos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn jitter_has_its_mean_and_a_heavy_tail() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let xs: Vec<i64> = (0..200_000)
            .map(|_| lomax_ns(100_000.0, &mut rng))
            .collect();
        let mean = xs.iter().sum::<i64>() as f64 / xs.len() as f64;
        // The cap trims the mean a little; the tail is far beyond an
        // exponential's (P(X > 10 × mean) = e^-10 ≈ 5e-5).
        assert!((mean - 100_000.0).abs() < 15_000.0, "{mean}");
        let far = xs.iter().filter(|&&x| x > 1_000_000).count() as f64 / xs.len() as f64;
        assert!(far > 0.005, "{far}");
        assert_eq!(lomax_ns(0.0, &mut rng), 0);
    }

    #[test]
    fn the_load_swells_and_ebbs_twice() {
        let d = 1_000;
        let l: Vec<f64> = [0, 125, 250, 375, 500]
            .iter()
            .map(|&t| load_level(t, d))
            .collect();
        assert!(l[0].abs() < 1e-9 && (l[1] - 0.5).abs() < 1e-9 && (l[2] - 1.0).abs() < 1e-9);
        assert!((l[3] - 0.5).abs() < 1e-9 && l[4].abs() < 1e-9);
    }
}
