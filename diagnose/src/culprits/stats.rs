//! The statistics the culprit tests need.

/// `P(X ≥ k)` for `X` Poisson with mean `lambda`: how surprising `k` rare
/// events are (probes lost) where `lambda` were expected. Summed in log
/// space from `k` up, so large counts neither overflow nor underflow.
pub fn poisson_at_least(k: u64, lambda: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if lambda <= 0.0 {
        return 0.0;
    }
    let ln_fact = |n: u64| (1..=n).map(|i| (i as f64).ln()).sum::<f64>();
    let mut ln_term = k as f64 * lambda.ln() - lambda - ln_fact(k);
    let mut p = 0.0;
    for i in k.. {
        p += ln_term.exp();
        ln_term += lambda.ln() - ((i + 1) as f64).ln();
        if i as f64 > lambda && ln_term.exp() < p * 1e-12 {
            break;
        }
    }
    p.min(1.0)
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
