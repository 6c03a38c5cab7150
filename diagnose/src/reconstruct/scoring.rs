//! Delay distributions of the gaps between a service's events: a Gaussian
//! for the first pass, then a 1-D Gaussian mixture fitted by EM with the
//! number of components chosen by BIC (TraceWeaver §4.1, step 3).

/// Widths below this (1 µs) are raised to it: gaps that are exactly
/// constant would otherwise give infinite densities.
const MIN_SD: f64 = 1_000.0;
/// TraceWeaver's maximum number of mixture components (Table 1, C = 5).
pub const MAX_COMPONENTS: usize = 5;
const EM_ROUNDS: usize = 60;

/// A 1-D Gaussian mixture over gap lengths in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct Mixture {
    /// (weight, mean, sd) per component.
    pub parts: Vec<(f64, f64, f64)>,
    /// Log density below which a gap counts as implausible: the density
    /// six pooled standard deviations from the pooled mean.
    pub floor: f64,
    /// That pooled standard deviation.
    pub spread: f64,
}

impl Mixture {
    pub fn gaussian(mean: f64, sd: f64) -> Self {
        let sd = sd.max(MIN_SD);
        let mut m = Mixture {
            parts: vec![(1.0, mean, sd)],
            floor: 0.0,
            spread: sd,
        };
        m.floor = m.ln_pdf(mean + 6.0 * sd);
        m
    }

    /// Gaussian with the sample mean and deviation of `xs`.
    pub fn fit_gaussian(xs: &[f64]) -> Option<Self> {
        let (m, sd) = mean_sd(xs)?;
        Some(Self::gaussian(m, sd))
    }

    /// The mixture of 1..=`max` components with the lowest BIC.
    pub fn fit_bic(xs: &[f64], max: usize) -> Option<Self> {
        let (m, sd) = mean_sd(xs)?;
        // Floor and spread are the pooled Gaussian's, whatever the parts.
        let pooled = Mixture::gaussian(m, sd);
        let mut best: Option<(f64, Mixture)> = None;
        for k in 1..=max.min(xs.len()).max(1) {
            let mix = Mixture {
                parts: em(xs, k),
                floor: pooled.floor,
                spread: pooled.spread,
            };
            let ll: f64 = xs.iter().map(|&x| mix.ln_pdf(x)).sum();
            let bic = (3 * k - 1) as f64 * (xs.len() as f64).ln() - 2.0 * ll;
            if best.as_ref().is_none_or(|(b, _)| bic < *b) {
                best = Some((bic, mix));
            }
        }
        best.map(|(_, m)| m)
    }

    /// The log density of a gap measured as `x` between two moments known
    /// to within `sd` (ns, their errors' combined standard deviation), and
    /// the floor below which it is implausible: each component widened by
    /// the error (a Gaussian's convolution with the error's), the floor
    /// with the pooled spread. A gap at an uninstrumented service is two
    /// estimates apart, off by up to a queue's worth where a burst began
    /// between two probes; judged by the exact gaps the call graph was
    /// learned from, the right calls there scored as impossible (issue 33).
    pub fn ln_pdf_within(&self, x: f64, sd: f64) -> (f64, f64) {
        let err = sd * sd;
        let wider = 0.5 * (1.0 + err / (self.spread * self.spread)).ln();
        (self.ln_density(x, err), self.floor - wider)
    }

    pub fn ln_pdf(&self, x: f64) -> f64 {
        self.ln_density(x, 0.0)
    }

    /// The log density at `x` with each component's variance widened by
    /// `err` (√(sd² + 0) is sd exactly: no error, no change).
    fn ln_density(&self, x: f64, err: f64) -> f64 {
        let p: f64 = (self.parts.iter())
            .map(|&(w, mu, sd)| w * normal_pdf(x, mu, (sd * sd + err).sqrt()))
            .sum();
        p.max(1e-300).ln()
    }
}

fn normal_pdf(x: f64, mu: f64, sd: f64) -> f64 {
    let z = (x - mu) / sd;
    (-0.5 * z * z).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
}

pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    Some((m, var.sqrt()))
}

/// EM for `k` components, started from the data's quantiles.
fn em(xs: &[f64], k: usize) -> Vec<(f64, f64, f64)> {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (_, sd) = mean_sd(xs).unwrap_or((0.0, MIN_SD));
    let mut parts: Vec<(f64, f64, f64)> = (0..k)
        .map(|i| {
            let q = sorted[((2 * i + 1) * sorted.len() / (2 * k)).min(sorted.len() - 1)];
            (1.0 / k as f64, q, (sd / k as f64).max(MIN_SD))
        })
        .collect();
    let mut resp = vec![0.0; k];
    for _ in 0..EM_ROUNDS {
        let mut acc = vec![(0.0, 0.0, 0.0); k];
        for &x in xs {
            let mut total = 0.0;
            for (r, &(w, mu, s)) in resp.iter_mut().zip(&parts) {
                *r = w * normal_pdf(x, mu, s);
                total += *r;
            }
            if total <= 0.0 {
                continue;
            }
            for (a, r) in acc.iter_mut().zip(&resp) {
                let r = r / total;
                a.0 += r;
                a.1 += r * x;
                a.2 += r * x * x;
            }
        }
        let n = xs.len() as f64;
        for (p, &(nk, sx, sxx)) in parts.iter_mut().zip(&acc) {
            if nk < 1e-9 {
                continue;
            }
            let mu = sx / nk;
            let var = (sxx / nk - mu * mu).max(0.0);
            *p = (nk / n, mu, var.sqrt().max(MIN_SD));
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bic_picks_two_components_for_two_clusters() {
        let xs: Vec<f64> = (0..200)
            .map(|i| {
                let jitter = (i % 10) as f64 * 1_000.0;
                if i % 2 == 0 {
                    100_000.0 + jitter
                } else {
                    900_000.0 + jitter
                }
            })
            .collect();
        let m = Mixture::fit_bic(&xs, MAX_COMPONENTS).unwrap();
        assert_eq!(m.parts.len(), 2, "{m:?}");
        assert!(m.ln_pdf(105_000.0) > m.ln_pdf(500_000.0) + 10.0);
    }

    #[test]
    fn one_cluster_stays_one_gaussian() {
        use rand::SeedableRng;
        use rand_distr::{Distribution, Normal};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let d = Normal::new(50_000.0, 3_000.0).unwrap();
        let xs: Vec<f64> = (0..300).map(|_| d.sample(&mut rng)).collect();
        let m = Mixture::fit_bic(&xs, MAX_COMPONENTS).unwrap();
        assert_eq!(m.parts.len(), 1);
        assert!(m.floor < m.ln_pdf(50_000.0));
    }

    #[test]
    fn a_gap_between_estimates_is_judged_within_their_error() {
        // Gaps of 300 ± 50 µs, measured between two moments one of which
        // may be off by a millisecond: a gap measured as -700 µs is
        // implausible between exact moments and plausible within the error.
        let m = Mixture::gaussian(300_000.0, 50_000.0);
        assert_eq!(
            m.ln_pdf_within(-700_000.0, 0.0),
            (m.ln_pdf(-700_000.0), m.floor)
        );
        let (exact, _) = m.ln_pdf_within(-700_000.0, 0.0);
        let (within, floor) = m.ln_pdf_within(-700_000.0, 1_000_000.0);
        assert!(
            exact < m.floor && within > floor,
            "{exact} {within} {floor}"
        );
        // The error costs the gap measured where it was expected: a
        // mapping of estimates does not outweigh one of exact moments.
        assert!(m.ln_pdf_within(300_000.0, 1_000_000.0).0 < m.ln_pdf(300_000.0));
    }
}
