//! Pirate's proportional mode sum: from one epoch's gap modes, the average
//! time from one batch of requests to the next, i.e. the response latency.
//!
//! Why it works: after modes at retransmission-timeout length are dropped,
//! the largest remaining modes are taken to be the inter-batch gaps (IBG),
//! the pauses while the client waits for responses. Each IBG closes one batch, so
//! the number of batches is the IBG mode's count, and the time the batches
//! took is every gap up to and including the IBG. Their ratio,
//! Σ_{m ≤ IBG} Pr(m)/Pr(IBG)·m̄ = Σ_{m ≤ IBG} sum(m) / count(IBG),
//! is the mean time from the start of one batch to the start of the next:
//! the request-to-triggered-request time the client's response latency
//! drives.

use super::modes::Mode;

/// What an estimate was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Pirate's proportional mode sum.
    ModeSum,
    /// The client's window (the largest burst, `.0` requests) times the
    /// mean gap: the mode sum's batches did not fit the window (see
    /// [`super::window`]).
    Window(u32),
}

/// One epoch's estimate for one connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Average response latency, ns.
    pub latency_ns: f64,
    pub basis: Basis,
    /// Mean of the mode taken as the inter-batch gap, ns.
    pub ibg_ns: f64,
    /// Batches: the IBG mode's count (one response-driven sample each).
    pub batches: u64,
    /// Gaps counted in the modes up to the IBG.
    pub gaps: u64,
    /// Modes left after dropping the timeout-length ones.
    pub modes: usize,
}

/// Least ratio between the means of two neighbouring modes for the pause
/// between them to part batches: a client's pause for responses is at
/// least half again the gaps inside a batch, while the spread of one
/// latency's gaps (jitter, queueing) splits them into modes only a few per
/// cent apart.
pub const VALLEY: f64 = 1.5;

/// The proportional mode sum over `modes` (ascending, as
/// [`super::modes::Modes`] keeps them), ignoring modes whose mean is at or
/// above `drop_at_ns` (retransmission timeouts, idling).
///
/// Which gaps are inter-batch gaps (IBGs): the modes above the widest
/// valley between neighbouring modes (by ratio of means, if at least
/// [`VALLEY`]); among them only those holding a gap after a short segment
/// when any mode holds one. The paper takes the single largest mode as the
/// IBG; that is the same whenever the largest mode stands alone above the
/// widest valley, and it is what the paper's example gives. We go beyond it
/// because a real epoch's pauses do not all fall within ε of each other:
/// jitter and queueing spread one latency over several modes, and any one
/// of them taken alone as the IBG would count a fraction of the batches.
/// Without a valley every gap is a pause (one request in flight). `None`
/// when no mode is left.
pub fn proportional_mode_sum(modes: &[Mode], drop_at_ns: u64) -> Option<Estimate> {
    let kept: Vec<&Mode> = modes
        .iter()
        .filter(|m| m.mean() < drop_at_ns as f64)
        .collect();
    let any_candidate = kept.iter().any(|m| m.candidates > 0);
    let ends_batch = |m: &&Mode| !any_candidate || m.candidates > 0;
    let valley = (1..kept.len())
        .map(|i| (i, kept[i].ratio_over(kept[i - 1])))
        .filter(|&(_, r)| r >= VALLEY)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0, |(i, _)| i);
    // A valley with nothing that ends a batch above it parts nothing.
    let split = if kept[valley..].iter().any(ends_batch) {
        valley
    } else {
        0
    };
    let pauses: Vec<&&Mode> = kept[split..].iter().filter(|m| ends_batch(m)).collect();
    let ibg = pauses.iter().max_by_key(|m| m.count)?;
    let batches: u64 = pauses.iter().map(|m| m.count).sum();
    let time: u64 = kept[..split].iter().map(|m| m.sum).sum::<u64>()
        + pauses.iter().map(|m| m.sum).sum::<u64>();
    Some(Estimate {
        latency_ns: time as f64 / batches as f64,
        basis: Basis::ModeSum,
        ibg_ns: ibg.mean(),
        batches,
        gaps: kept[..split].iter().map(|m| m.count).sum::<u64>() + batches,
        modes: kept.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(mean_us: u64, count: u64, candidates: u64) -> Mode {
        let g = mean_us * 1_000;
        Mode {
            min: g,
            max: g,
            count,
            sum: g * count,
            candidates,
        }
    }

    #[test]
    fn the_papers_example_sums_to_950_us() {
        // Modes 100, 150, 250 µs with Pr 0.4, 0.2, 0.1; the remaining 0.3
        // is a retransmission-timeout mode (300 ms) that is dropped.
        let modes = [
            mode(100, 4, 4),
            mode(150, 2, 2),
            mode(250, 1, 1),
            mode(300_000, 3, 3),
        ];
        let e = proportional_mode_sum(&modes, 200_000_000).expect("an estimate");
        assert!((e.latency_ns - 950_000.0).abs() < 1e-6, "{e:?}");
        assert_eq!((e.batches, e.gaps, e.modes), (1, 7, 3));
        assert!((e.ibg_ns - 250_000.0).abs() < 1e-6);
    }

    #[test]
    fn only_candidate_modes_above_the_valley_are_pauses() {
        // 400 µs holds only gaps after full-size segments: not a pause while
        // a candidate mode exists, and not summed.
        let modes = [mode(10, 6, 0), mode(200, 2, 2), mode(400, 1, 0)];
        let e = proportional_mode_sum(&modes, 200_000_000).expect("an estimate");
        assert!((e.ibg_ns - 200_000.0).abs() < 1e-6);
        assert!((e.latency_ns - (60.0 + 400.0) * 1_000.0 / 2.0).abs() < 1e-6);
        // Without any candidate both modes above the valley are pauses.
        let plain = [mode(10, 6, 0), mode(200, 2, 0), mode(400, 1, 0)];
        let e = proportional_mode_sum(&plain, 200_000_000).expect("an estimate");
        assert_eq!(e.batches, 3);
        assert!((e.latency_ns - (60.0 + 400.0 + 400.0) * 1_000.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn a_stray_slow_gap_is_a_late_batch_not_the_ibg() {
        // 300 batches: 3 gaps of 10 µs and a 1000 µs IBG each; one response
        // came late (5000 µs): a mode of one gap, 1/1201 of them.
        let modes = [mode(10, 900, 900), mode(1000, 299, 299), mode(5000, 1, 1)];
        let e = proportional_mode_sum(&modes, 200_000_000).expect("an estimate");
        assert!((e.ibg_ns - 1_000_000.0).abs() < 1e-6, "{e:?}");
        assert_eq!(e.batches, 300);
        let expect = (9_000.0 + 299_000.0 + 5_000.0) * 1_000.0 / 300.0;
        assert!((e.latency_ns - expect).abs() < 1e-6, "{e:?}");
        // One latency spread over neighbouring modes: all are pauses.
        let spread = [mode(1000, 60, 60), mode(1040, 30, 30), mode(1100, 10, 10)];
        let e = proportional_mode_sum(&spread, 200_000_000).expect("an estimate");
        assert_eq!(e.batches, 100);
        assert!((e.latency_ns - 1_022_000.0).abs() < 1e-6, "{e:?}");
    }

    #[test]
    fn nothing_left_after_dropping_is_no_estimate() {
        assert_eq!(proportional_mode_sum(&[], 1), None);
        // A mode exactly at the threshold is dropped too.
        assert_eq!(
            proportional_mode_sum(&[mode(200_000, 5, 5)], 200_000_000),
            None
        );
    }
}
