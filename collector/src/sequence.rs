//! Loss, reordering and duplicates of one path, from its sequence numbers.
//!
//! The generator numbers each path's probes 0, 1, 2, ...; a gap is a loss
//! until the missing number turns up late (then it was reordered). A window of
//! recent numbers tells a late probe from a duplicate.

/// Sequence numbers remembered below the highest one.
const WINDOW: u32 = 4096;
/// A jump this far ahead (or more than [`WINDOW`] back) is a generator
/// restart, not a burst of loss.
const RESTART_GAP: u32 = 1 << 20;

use intpath_store::rows::SeqStats;

/// What one arrival meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Newer than everything so far; `gap` numbers were skipped (lost, for now).
    InOrder { gap: u32 },
    /// Fills an earlier gap: one loss less.
    Late,
    /// Seen before.
    Duplicate,
    /// Older than the first number seen: cannot tell late from duplicate.
    TooOld,
}

#[derive(Debug, Clone, Default)]
pub struct SeqTracker {
    stats: SeqStats,
    started: bool,
    /// Bit `i` set: `last_seq - i` was received.
    seen: Vec<u64>,
}

impl SeqTracker {
    pub fn stats(&self) -> SeqStats {
        self.stats
    }

    pub fn observe(&mut self, seq: u32) -> Arrival {
        if self.seen.is_empty() {
            self.seen = vec![0; (WINDOW / 64) as usize];
        }
        let s = &mut self.stats;
        let restart = (seq > s.last_seq && seq - s.last_seq > RESTART_GAP)
            || (seq < s.last_seq && s.last_seq - seq >= WINDOW);
        if !self.started || restart {
            if self.started {
                s.restarts += 1;
            }
            self.started = true;
            s.first_seq = seq;
            s.last_seq = seq;
            s.received += 1;
            self.seen.iter_mut().for_each(|w| *w = 0);
            self.seen[0] = 1;
            return Arrival::InOrder { gap: 0 };
        }
        if seq > s.last_seq {
            let ahead = seq - s.last_seq;
            shift(&mut self.seen, ahead);
            self.seen[0] |= 1;
            s.last_seq = seq;
            s.received += 1;
            s.lost += u64::from(ahead - 1);
            return Arrival::InOrder { gap: ahead - 1 };
        }
        let back = s.last_seq - seq;
        if seq < s.first_seq {
            return Arrival::TooOld;
        }
        let (w, b) = ((back / 64) as usize, back % 64);
        if self.seen[w] & (1 << b) != 0 {
            s.duplicates += 1;
            return Arrival::Duplicate;
        }
        self.seen[w] |= 1 << b;
        s.received += 1;
        s.reordered += 1;
        s.lost = s.lost.saturating_sub(1);
        Arrival::Late
    }
}

/// Moves the window `by` numbers forward (bit i becomes bit i + by).
fn shift(words: &mut [u64], by: u32) {
    let n = words.len();
    let (ws, bs) = ((by / 64) as usize, by % 64);
    for i in (0..n).rev() {
        let lo = i.checked_sub(ws).map_or(0, |j| words[j]);
        let lower = i.checked_sub(ws + 1).map_or(0, |j| words[j]);
        words[i] = if bs == 0 {
            lo
        } else {
            (lo << bs) | (lower >> (64 - bs))
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_late_arrivals_and_duplicates() {
        let mut t = SeqTracker::default();
        assert_eq!(t.observe(10), Arrival::InOrder { gap: 0 });
        assert_eq!(t.observe(11), Arrival::InOrder { gap: 0 });
        assert_eq!(t.observe(15), Arrival::InOrder { gap: 3 });
        assert_eq!(t.observe(13), Arrival::Late);
        assert_eq!(t.observe(13), Arrival::Duplicate);
        assert_eq!(t.observe(15), Arrival::Duplicate);
        assert_eq!(t.observe(9), Arrival::TooOld);
        // Across word boundaries of the window.
        assert_eq!(t.observe(15 + 130), Arrival::InOrder { gap: 129 });
        assert_eq!(t.observe(14), Arrival::Late);
        assert_eq!(t.observe(14), Arrival::Duplicate);
        assert_eq!(t.observe(11), Arrival::Duplicate);
        let s = t.stats();
        assert_eq!((s.first_seq, s.last_seq), (10, 145));
        assert_eq!(s.received, 6);
        assert_eq!(s.duplicates, 4);
        assert_eq!(s.reordered, 2);
        assert_eq!(s.lost, 136 - 6);
    }

    #[test]
    fn huge_jump_is_a_restart() {
        let mut t = SeqTracker::default();
        t.observe(5);
        assert_eq!(t.observe(5 + RESTART_GAP + 1), Arrival::InOrder { gap: 0 });
        assert_eq!(t.stats().restarts, 1);
        assert_eq!(t.stats().lost, 0);
        assert_eq!(t.observe(0), Arrival::InOrder { gap: 0 });
        assert_eq!(t.stats().restarts, 2);
    }
}
