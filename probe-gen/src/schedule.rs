//! When each packet is due: per-flow inter-arrival processes merged into one
//! timeline of absolute deadlines.
//!
//! Deadlines are absolute (start + sum of gaps, kept in `f64`) rather than
//! "sleep one gap after each send", so that sending time, sleep overshoot and
//! rounding never accumulate into a rate error.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

/// How the gaps between two packets of one flow are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spacing {
    /// Every gap is exactly `1 / rate`.
    Constant,
    /// Gaps are exponential with mean `1 / rate` (a Poisson process).
    Poisson,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    #[error("rate must be a positive, finite number of packets per second, not {0}")]
    BadRate(f64),
}

/// The gap generator of one flow.
#[derive(Debug, Clone)]
pub struct Interarrival {
    mean_gap_ns: f64,
    spacing: Spacing,
    rng: SmallRng,
}

impl Interarrival {
    pub fn new(rate_pps: f64, spacing: Spacing, seed: u64) -> Result<Self, ScheduleError> {
        if !(rate_pps.is_finite() && rate_pps > 0.0) {
            return Err(ScheduleError::BadRate(rate_pps));
        }
        Ok(Self {
            mean_gap_ns: 1e9 / rate_pps,
            spacing,
            rng: SmallRng::seed_from_u64(seed),
        })
    }

    pub fn mean_gap_ns(&self) -> f64 {
        self.mean_gap_ns
    }

    /// The next gap in nanoseconds.
    pub fn next_gap_ns(&mut self) -> f64 {
        match self.spacing {
            Spacing::Constant => self.mean_gap_ns,
            Spacing::Poisson => {
                // Inverse transform; 1 - u lies in (0, 1], so ln never sees 0.
                let u: f64 = self.rng.random();
                -(1.0 - u).ln() * self.mean_gap_ns
            }
        }
    }
}

/// When to stop: after `count` packets per flow and/or after `duration`.
/// With neither, the schedule never ends (the caller stops it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limit {
    pub count_per_flow: Option<u64>,
    pub duration: Option<Duration>,
}

#[derive(Debug, Clone)]
struct Flow {
    gaps: Interarrival,
    next_ns: f64,
    left: Option<u64>,
}

/// The merged deadlines of several flows, earliest first.
#[derive(Debug, Clone)]
pub struct Schedule {
    flows: Vec<Flow>,
    /// (deadline in ns since start, flow index); ties go to the lower index.
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    end_ns: Option<u64>,
}

impl Schedule {
    /// Constant flows start staggered across one gap so that many paths at the
    /// same rate do not all fire in the same microsecond; Poisson flows start
    /// after a first exponential gap, which is what a process already running
    /// at time zero would show.
    pub fn new(gaps: Vec<Interarrival>, limit: Limit) -> Self {
        let n = gaps.len().max(1) as f64;
        let mut flows: Vec<Flow> = gaps
            .into_iter()
            .enumerate()
            .map(|(i, mut gaps)| {
                let next_ns = match gaps.spacing {
                    Spacing::Constant => gaps.mean_gap_ns * i as f64 / n,
                    Spacing::Poisson => gaps.next_gap_ns(),
                };
                Flow {
                    gaps,
                    next_ns,
                    left: limit.count_per_flow,
                }
            })
            .collect();
        let end_ns = limit.duration.map(|d| d.as_nanos() as u64);
        let mut heap = BinaryHeap::with_capacity(flows.len());
        for (i, f) in flows.iter_mut().enumerate() {
            if f.left != Some(0) {
                heap.push(Reverse((f.next_ns as u64, i)));
            }
        }
        let mut s = Self {
            flows,
            heap,
            end_ns,
        };
        s.drop_expired();
        s
    }

    /// The earliest pending deadline, if any packet is left.
    pub fn peek(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Takes the earliest packet: its deadline and flow index.
    pub fn pop(&mut self) -> Option<(u64, usize)> {
        let Reverse((t, i)) = self.heap.pop()?;
        let f = &mut self.flows[i];
        if let Some(left) = &mut f.left {
            *left -= 1;
        }
        if f.left != Some(0) {
            f.next_ns += f.gaps.next_gap_ns();
            if self.end_ns.is_none_or(|end| (f.next_ns as u64) < end) {
                self.heap.push(Reverse((f.next_ns as u64, i)));
            }
        }
        Some((t, i))
    }

    fn drop_expired(&mut self) {
        if let Some(end) = self.end_ns {
            self.heap.retain(|Reverse((t, _))| *t < end);
        }
    }

    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// Time (ns since start) at which the schedule ends, if it has a duration.
    pub fn end_ns(&self) -> Option<u64> {
        self.end_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(mut s: Schedule) -> Vec<(u64, usize)> {
        std::iter::from_fn(|| s.pop()).collect()
    }

    #[test]
    fn constant_flows_are_staggered_and_counted() {
        let gaps = (0..2)
            .map(|i| Interarrival::new(1000.0, Spacing::Constant, i).unwrap())
            .collect();
        let got = drain(Schedule::new(
            gaps,
            Limit {
                count_per_flow: Some(3),
                duration: None,
            },
        ));
        let want = [
            (0, 0),
            (500_000, 1),
            (1_000_000, 0),
            (1_500_000, 1),
            (2_000_000, 0),
            (2_500_000, 1),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn duration_cuts_the_schedule_without_drift() {
        // 3 pps has a gap that is not a whole number of ns; absolute deadlines
        // must still land exactly 10 packets in 10/3 s.
        let gaps = vec![Interarrival::new(3.0, Spacing::Constant, 0).unwrap()];
        let got = drain(Schedule::new(
            gaps,
            Limit {
                count_per_flow: None,
                duration: Some(Duration::from_secs(10)),
            },
        ));
        assert_eq!(got.len(), 30);
        assert_eq!(got[29].0, 9_666_666_666);
    }

    #[test]
    fn poisson_gaps_have_the_right_mean() {
        let mut g = Interarrival::new(1000.0, Spacing::Poisson, 7).unwrap();
        let n = 100_000;
        let mean = (0..n).map(|_| g.next_gap_ns()).sum::<f64>() / n as f64;
        // Standard error of the mean is 1 ms / sqrt(n) ≈ 3.2 µs.
        assert!((mean - 1e6).abs() < 15e3, "mean gap {mean} ns");
    }

    #[test]
    fn bad_rates_are_refused() {
        for r in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(Interarrival::new(r, Spacing::Constant, 0).is_err());
        }
    }
}
