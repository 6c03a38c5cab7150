//! The statistics the culprit tests need.

/// `ln(n!)` for every `n` up to a bound, so each Fisher test is a sum.
pub struct LnFactorial(Vec<f64>);

impl LnFactorial {
    pub fn new(max: usize) -> Self {
        let mut v = Vec::with_capacity(max + 1);
        let mut acc = 0.0;
        v.push(0.0);
        for n in 1..=max {
            acc += (n as f64).ln();
            v.push(acc);
        }
        LnFactorial(v)
    }

    fn get(&self, n: u64) -> f64 {
        self.0[n as usize]
    }
}

/// One-sided Fisher exact test on the 2×2 table `[[a, b], [c, d]]`: the
/// probability, with the margins fixed, of at least `a` in the first cell.
/// Here: `a` slow requests crossing a link, `b` slow not crossing, `c` fast
/// crossing, `d` fast not crossing.
pub fn fisher_greater(lf: &LnFactorial, a: u64, b: u64, c: u64, d: u64) -> f64 {
    let (r1, r2, c1) = (a + b, c + d, a + c);
    let n = r1 + r2;
    let ln_p = |x: u64| {
        lf.get(r1) + lf.get(r2) + lf.get(c1) + lf.get(n - c1)
            - lf.get(n)
            - lf.get(x)
            - lf.get(r1 - x)
            - lf.get(c1 - x)
            - lf.get(r2 + x - c1)
    };
    let hi = r1.min(c1);
    let p: f64 = (a..=hi).map(|x| ln_p(x).exp()).sum();
    p.min(1.0)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fisher_matches_the_lady_tasting_tea() {
        // Fisher's own example: 3 of 4 right, one-sided p = 17/70.
        let lf = LnFactorial::new(8);
        let p = fisher_greater(&lf, 3, 1, 1, 3);
        assert!((p - 17.0 / 70.0).abs() < 1e-12, "{p}");
        assert!((fisher_greater(&lf, 4, 0, 0, 4) - 1.0 / 70.0).abs() < 1e-12);
        assert!((fisher_greater(&lf, 0, 4, 4, 0) - 1.0).abs() < 1e-12);
    }

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
