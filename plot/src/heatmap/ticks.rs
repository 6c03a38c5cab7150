//! Time labels a reader can take in at a glance: ticks at round seconds and
//! titles that never say "-0.0" (bucket edges land a hair below zero).

/// Ticks at multiples of 1, 2 or 5 × 10^k within `[from, to]`, about `n`.
pub fn round_ticks(from: f64, to: f64, n: usize) -> Vec<f64> {
    let span = to - from;
    if !(span.is_finite() && span > 0.0) {
        return vec![];
    }
    let raw = span / n.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (from / step).ceil() as i64;
    let last = (to / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// Seconds for labels and titles: one decimal at most, never `-0.0`.
pub fn seconds(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0 + 0.0;
    if r == r.trunc() {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::{round_ticks, seconds};

    #[test]
    fn time_ticks_are_round_and_never_negative_zero() {
        assert_eq!(
            round_ticks(-0.1, 10.1, 8),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        let small: Vec<String> = round_ticks(0.0, 0.5, 8).into_iter().map(seconds).collect();
        assert_eq!(small, ["0", "0.1", "0.2", "0.3", "0.4", "0.5"]);
        assert!(round_ticks(3.0, 3.0, 8).is_empty());
        assert_eq!(seconds(-0.04), "0");
        assert_eq!(seconds(-0.0), "0");
        assert_eq!(seconds(2.54), "2.5");
        assert_eq!(seconds(10.0), "10");
    }
}
