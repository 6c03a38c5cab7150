//! Block permutation p-values, shared by the change test ([`super::change`])
//! and the comparison with a healthy period ([`super::healthy`]): a
//! statistic of the blocks in their real order against the same statistic
//! of the blocks shuffled, several statistics judged together by the
//! smallest of their p-values. Shuffles continue past the first
//! [`SHUFFLES`] while the real order is beaten almost never, so that
//! p-values small enough to pass a false-discovery bound over hundreds of
//! candidates (a large fabric's links) can be reached.

use rand::seq::SliceRandom;
use rand::Rng;

/// Shuffles per test at the least; more while fewer than [`RARE`]
/// shuffles reached the real order, up to what a p-value needs to pass
/// the false discovery rate among all the candidates tested.
pub const SHUFFLES: usize = 1999;
const RARE: usize = 10;
const MAX_SHUFFLES: usize = 199_999;

/// The p-value of the smallest of the statistics `real` (the blocks in
/// their real order) among the same statistics, `shapes`, of shuffled
/// `order`s of the blocks ([`min_p`]), for one of `candidates` tested at
/// false discovery rate `fdr`.
pub(super) fn p_value(
    real: Vec<f64>,
    candidates: usize,
    fdr: f64,
    order: &mut [usize],
    rng: &mut impl Rng,
    mut shapes: impl FnMut(&[usize]) -> Vec<f64>,
) -> f64 {
    // The first candidate passes Benjamini-Hochberg at p <= fdr / m, and
    // taking the best of the shapes costs up to that many times it: enough
    // shuffles that a p-value there is [`RARE`] shuffles, not one or two
    // whose chance would decide the verdict.
    let enough = ((real.len() as f64 * RARE as f64 * candidates.max(1) as f64 / fdr) as usize)
        .clamp(SHUFFLES, MAX_SHUFFLES);
    let mut beaten = vec![0usize; real.len()];
    let mut under: Vec<Vec<f64>> = vec![Vec::new(); real.len()];
    while under[0].len() < SHUFFLES
        || (under[0].len() < enough && beaten.iter().min().is_some_and(|&b| b < RARE))
    {
        order.shuffle(rng);
        for ((x, r), (u, b)) in shapes(order)
            .into_iter()
            .zip(&real)
            .zip(under.iter_mut().zip(&mut beaten))
        {
            *b += usize::from(x >= *r);
            u.push(x);
        }
    }
    let stats: Vec<(f64, Vec<f64>)> = real.into_iter().zip(under).collect();
    min_p(&stats)
}

/// The p-value of the smaller of several statistics' permutation p-values,
/// each given as its real value and its values under the same shuffles
/// (shuffle `i` of each): the share of shuffles whose own smallest p-value
/// is at most the real order's.
pub(super) fn min_p(stats: &[(f64, Vec<f64>)]) -> f64 {
    let shuffles = stats.first().map_or(0, |(_, v)| v.len());
    let p = |k: usize| (k + 1) as f64 / (shuffles + 1) as f64;
    // Per statistic, shuffle i's p-value among the shuffles: how many are
    // at least as large, found from the values sorted high to low.
    let mut smallest = vec![1.0f64; shuffles];
    let mut real = 1.0f64;
    for (value, under) in stats {
        let mut sorted = under.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        let at_least = |x: f64| sorted.partition_point(|&v| v >= x);
        real = real.min(p(at_least(*value)));
        for (s, &v) in smallest.iter_mut().zip(under) {
            *s = s.min(p(at_least(v)));
        }
    }
    p(smallest.iter().filter(|&&s| s <= real).count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn more_shapes_cost_no_more_than_multiplying_and_nothing_when_they_agree() {
        let mut rng = StdRng::seed_from_u64(3);
        let shuffled = |rng: &mut StdRng| -> Vec<f64> { (0..999).map(|_| rng.gen()).collect() };
        let a = shuffled(&mut rng);
        let b = shuffled(&mut rng);
        // The real value beats all but 9 of 999 shuffles: p = 0.01.
        let mut sorted = a.clone();
        sorted.sort_by(|x, y| y.total_cmp(x));
        let real = (sorted[8] + sorted[9]) / 2.0;
        let alone = min_p(&[(real, a.clone())]);
        assert!((alone - 0.01).abs() < 1e-12, "{alone}");
        // The same statistic twice is one test.
        assert!((min_p(&[(real, a.clone()), (real, a.clone())]) - alone).abs() < 1e-12);
        // An unrelated second statistic that says nothing: between the
        // one p-value and twice it.
        let both = min_p(&[(real, a), (-1.0, b)]);
        assert!((alone..=2.0 * alone + 1e-12).contains(&both), "{both}");
    }
}
