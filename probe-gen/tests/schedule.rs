//! The schedule's law, with samples large enough that a wrong rate or shape
//! cannot hide: Poisson flows give exponential gaps, and merged Poisson flows
//! give the gaps of one Poisson flow at the summed rate.

mod common;

use probe_gen::schedule::{Interarrival, Limit, Schedule, Spacing};

fn gaps_s(mut s: Schedule) -> Vec<f64> {
    let t: Vec<u64> = std::iter::from_fn(|| s.pop().map(|(t, _)| t)).collect();
    t.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e9).collect()
}

fn poisson(rates: &[f64], seed: u64, count: u64) -> Schedule {
    let flows = rates
        .iter()
        .enumerate()
        .map(|(i, &r)| Interarrival::new(r, Spacing::Poisson, seed + i as u64).unwrap())
        .collect();
    Schedule::new(
        flows,
        Limit {
            count_per_flow: Some(count),
            duration: None,
        },
    )
}

#[test]
fn one_poisson_flow_has_exponential_gaps() {
    for seed in [1, 2, 3] {
        let gaps = gaps_s(poisson(&[1000.0], seed, 100_000));
        let d = common::ks_exponential(&gaps, 1000.0);
        assert!(
            d < common::ks_critical_0001(gaps.len()),
            "seed {seed}: KS {d}"
        );
        // The same gaps are far from an exponential of another rate.
        assert!(common::ks_exponential(&gaps, 1100.0) > common::ks_critical_0001(gaps.len()));
    }
}

#[test]
fn merged_poisson_flows_are_poisson_at_the_summed_rate() {
    // Only the middle of the run, where every flow is still active.
    let gaps = gaps_s(poisson(&[100.0, 200.0, 300.0, 400.0], 9, 50_000));
    let mid = &gaps[1000..gaps.len() / 2];
    let d = common::ks_exponential(mid, 1000.0);
    assert!(d < common::ks_critical_0001(mid.len()), "KS {d}");
}

#[test]
fn constant_spacing_is_not_exponential() {
    let flows = vec![Interarrival::new(1000.0, Spacing::Constant, 0).unwrap()];
    let gaps = gaps_s(Schedule::new(
        flows,
        Limit {
            count_per_flow: Some(1000),
            duration: None,
        },
    ));
    assert!(gaps.iter().all(|&g| (g - 1e-3).abs() < 1e-9));
    assert!(common::ks_exponential(&gaps, 1000.0) > 0.5);
}
