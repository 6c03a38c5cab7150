//! The statistics the culprit tests need.

/// `P(X ≥ k)` for `X` Poisson with mean `lambda`: how surprising `k` rare
/// events are (probes lost) where `lambda` were expected. Through the
/// regularized incomplete gamma function, so the cost does not grow with
/// `k` and a tail too small for an `f64` is 0, not a series that never ends.
pub fn poisson_at_least(k: u64, lambda: f64) -> f64 {
    use statrs::distribution::{DiscreteCDF, Poisson};
    if k == 0 {
        return 1.0;
    }
    match Poisson::new(lambda) {
        Ok(poisson) => poisson.sf(k - 1),
        // No rate at all (or not a number): any event is impossible.
        Err(_) => 0.0,
    }
}

/// Benjamini–Hochberg adjusted p-values (q-values), in input order.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut q = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

/// P(Z >= z) for a standard normal Z (Abramowitz–Stegun 7.1.26 for erfc,
/// absolute error under 1.5e-7, which a p-value compared with a false
/// discovery bound does not feel).
pub fn normal_upper_tail(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    match z >= 0.0 {
        true => erfc / 2.0,
        false => 1.0 - erfc / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_tail_matches_its_sum() {
        // λ = 2: P(X ≥ 3) = 1 − e⁻²(1 + 2 + 2) = 0.3233.
        assert!((poisson_at_least(3, 2.0) - 0.323_323_583_8).abs() < 1e-9);
        assert_eq!(poisson_at_least(0, 5.0), 1.0);
        // 50 lost where 0.5 were expected: vanishingly unlikely, not NaN.
        let p = poisson_at_least(50, 0.5);
        assert!(p > 0.0 && p < 1e-60, "{p}");
        // Thousands lost where a thousandth was expected: the tail is
        // below an f64 and the answer comes at once (the summed series
        // never ended here and hung a diagnosis in CI).
        let started = std::time::Instant::now();
        assert_eq!(poisson_at_least(5_000, 1e-3), 0.0);
        assert_eq!(poisson_at_least(u64::from(u32::MAX), 0.2), 0.0);
        assert!(started.elapsed() < std::time::Duration::from_millis(100));
        assert_eq!(poisson_at_least(1, 0.0), 0.0);
    }

    #[test]
    fn benjamini_hochberg_is_monotone_and_scaled() {
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.5]);
        // Sorted: 0.01*4/1=0.04, 0.03*4/2=0.06, 0.04*4/3=0.0533→min(…,0.0533), 0.5.
        assert!((q[0] - 0.04).abs() < 1e-12);
        assert!((q[2] - 0.0533333333).abs() < 1e-9);
        assert!((q[1] - 0.0533333333).abs() < 1e-9);
        assert!((q[3] - 0.5).abs() < 1e-12);
    }
}
