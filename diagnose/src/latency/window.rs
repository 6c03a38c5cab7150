//! When Pirate's batches dissolve: the client's window and Little's law.
//!
//! The mode sum counts one response-driven pause per batch of requests, so
//! it needs the batches to stay apart (the paper's prominent-gap
//! assumption). A client keeping W requests in flight, each response
//! triggering one new request, starts with a burst of W but drifts: think
//! times and service times differ, the requests spread over the round, and
//! the gaps inside a batch fill the pause. The simulated matrix showed the
//! mode sum then answering latency / W (everything one mode) or, under
//! load, the epoch divided by a handful of late responses (errors in the
//! thousands of per cent).
//!
//! Such a client is a closed loop: W requests always in flight, so by
//! Little's law its response latency is W × the mean gap between its
//! requests (think time included, as in the mode sum). W shows as the
//! largest burst of requests sent back to back: at most W can be sent
//! before a response arrives, and the opening burst is all W. The window
//! estimate replaces the mode sum only when the mode sum's own batches
//! disagree with that window: batches that stay apart hold W requests each
//! (W − 1 short gaps and one pause), so a count of requests off from W per
//! pause by more than the batch an epoch's edge cuts means some batches
//! have split or merged (on a busy machine a
//! client that is descheduled between two responses splits its batch, and
//! every split adds a pause the mode sum divides by); where they agree the
//! mode sum, which needs no closed loop, is kept.
//!
//! What this assumes and where it is wrong: a client that is not a closed
//! loop, e.g. batches of very different sizes (one request, then six in
//! parallel), shows its largest batch as W and gets W × its mean gap, an
//! overestimate. The estimate says which basis it used, so such a client
//! can be read with care.

use std::time::Duration;

/// Requests closer than this are one burst: a client writes a window of
/// requests within microseconds, while a response takes at least a round
/// trip.
pub const BURST_GAP: Duration = Duration::from_micros(20);

/// Bursts of one connection's requests, across its epochs.
#[derive(Debug, Clone, Default)]
pub struct Window {
    /// Time of the last request, ns.
    last: Option<i64>,
    /// Requests in the burst in progress.
    burst: u32,
    /// The largest burst so far: a lower bound on the window, equal to it
    /// once the opening burst was seen.
    largest: u32,
}

impl Window {
    /// Takes a request sent at `at_ns`: a segment carrying data (a SYN or
    /// FIN asks for nothing; on loopback a SYN lands microseconds before
    /// the first request and would count as one more).
    pub fn request(&mut self, at_ns: i64) {
        let close = self
            .last
            .is_some_and(|t| at_ns.saturating_sub(t) <= BURST_GAP.as_nanos() as i64);
        self.burst = if close { self.burst + 1 } else { 1 };
        self.largest = self.largest.max(self.burst);
        self.last = Some(at_ns);
    }

    /// The window as seen so far (at least 1).
    pub fn size(&self) -> u32 {
        self.largest.max(1)
    }
}

/// Whether a mode sum that counted `gaps` gaps in `batches` batches fits a
/// client with window `w`: batches that stay apart hold exactly `w`
/// requests each, so the count is off only by the batch the epoch's edge
/// cuts (fewer than `w` gaps). Any more means batches split or merged, and
/// each split costs the mode sum a pause it divides by: 3 % of splits, an
/// estimate 3 % low, where the window's count is exact.
pub fn batches_fit(gaps: u64, batches: u64, w: u32) -> bool {
    if w <= 1 || batches == 0 {
        return w <= 1;
    }
    let w = u64::from(w);
    gaps.abs_diff(w.saturating_mul(batches)) < w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_back_to_back_burst_is_the_window() {
        let mut w = Window::default();
        assert_eq!(w.size(), 1);
        // Opening burst of 4, then requests one by one, then a pair.
        let mut t = 0;
        let mut after = |gap: i64, w: &mut Window| {
            t += gap;
            w.request(t);
        };
        for gap in [0, 4_000, 4_000, 4_000] {
            after(gap, &mut w);
        }
        for _ in 0..10 {
            after(250_000, &mut w);
        }
        after(5_000, &mut w);
        assert_eq!(w.size(), 4);
    }

    #[test]
    fn batches_fit_a_window_up_to_the_batch_an_epoch_edge_cuts() {
        assert!(batches_fit(400, 100, 4));
        assert!(batches_fit(397, 100, 4), "the epoch began inside a batch");
        assert!(batches_fit(403, 100, 4), "and ended inside one");
        assert!(!batches_fit(388, 100, 4), "three batches split");
        assert!(!batches_fit(340, 100, 4), "some batches split");
        assert!(!batches_fit(100, 100, 4), "one request per pause");
        assert!(!batches_fit(3600, 36, 4), "a hundred per pause");
        assert!(batches_fit(100, 100, 1), "window 1: nothing to replace");
        assert!(!batches_fit(10, 0, 4));
    }
}
