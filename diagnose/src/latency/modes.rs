//! The per-connection gap histogram of Pirate's Alg. 2: at most `limit`
//! modes, each a range `[min, max]` with the count and sum of the gaps it
//! took. A fixed-width histogram fine enough for data-centre gaps (tens of
//! µs) over an epoch would need thousands of counters per connection; these
//! modes let each connection's few clusters of gaps pick their own ranges
//! and cost a handful of words.

/// One cluster of inter-packet gaps, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    pub min: u64,
    pub max: u64,
    pub count: u64,
    pub sum: u64,
    /// How many of the gaps followed a segment shorter than full size: a
    /// client sends full segments back to back while it has data, so a
    /// short one is where a batch may end (inter-batch-gap candidates).
    pub candidates: u64,
}

impl Mode {
    fn single(gap: u64, candidate: bool) -> Self {
        Mode {
            min: gap,
            max: gap,
            count: 1,
            sum: gap,
            candidates: u64::from(candidate),
        }
    }

    /// Mean gap of the mode, ns.
    pub fn mean(&self) -> f64 {
        self.sum as f64 / self.count.max(1) as f64
    }

    /// How many times `below`'s mean this mode's is: how wide the valley
    /// between them is, the measure the mode sum parts batches by and a
    /// full histogram merges by.
    pub fn ratio_over(&self, below: &Mode) -> f64 {
        self.mean() / below.mean().max(1.0)
    }

    fn absorb(&mut self, o: &Mode) {
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.sum += o.sum;
        self.candidates += o.candidates;
    }
}

/// What [`Modes::add`] did with a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// Counted into an existing mode (perhaps widening it, perhaps merging
    /// it with a neighbour it now reaches).
    Joined,
    /// Opened a new mode.
    Opened,
    /// Opened a new mode in a full histogram, which then merged the two
    /// neighbouring modes closest by ratio of means.
    Merged,
}

/// The modes of one connection over one epoch, kept sorted and disjoint.
///
/// Where every slot is taken and a gap is near none, Pirate's Alg. 2
/// discards the gap. On a loaded machine the slots fill with stray gaps (a
/// stalled client's late requests, each far from the others), and from then
/// on what is discarded is mostly the long gaps: the loopback tests read
/// 5–12 % low, and an epoch that began with a stall kept 33 of its 375
/// gaps. Here the gap opens a mode and the two neighbours closest by ratio
/// merge: every gap's time is counted, and what is lost is resolution
/// between modes that are nearly alike. The widest valley, where the mode
/// sum parts batches, never narrows: a mode merged with one beyond it has
/// its mean moved away from the valley.
#[derive(Debug, Clone)]
pub struct Modes {
    modes: Vec<Mode>,
    limit: usize,
    epsilon: u64,
}

impl Modes {
    /// At most `limit` modes (at least one); a gap joins a mode it lies
    /// within `epsilon` ns of.
    pub fn new(limit: usize, epsilon: u64) -> Self {
        let limit = limit.max(1);
        Modes {
            // One more than the limit: a new mode is inserted before the
            // closest pair merges.
            modes: Vec::with_capacity(limit + 1),
            limit,
            epsilon,
        }
    }

    /// The modes, ascending.
    pub fn modes(&self) -> &[Mode] {
        &self.modes
    }

    /// Forgets every gap (a new epoch).
    pub fn clear(&mut self) {
        self.modes.clear();
    }

    /// Counts gap `gap` (ns): into the first mode (ascending) whose range
    /// widened by ε on both sides holds it, widening that mode to it and
    /// merging the mode with the neighbour it then lies within ε of;
    /// otherwise into a new mode, merging the closest pair when that makes
    /// one too many.
    pub fn add(&mut self, gap: u64, candidate: bool) -> Added {
        let eps = self.epsilon;
        let near = self
            .modes
            .iter()
            .position(|m| m.min.saturating_sub(eps) <= gap && gap <= m.max.saturating_add(eps));
        if let Some(i) = near {
            let m = &mut self.modes[i];
            m.absorb(&Mode::single(gap, candidate));
            // Only the side that moved can now reach a neighbour.
            if gap < self.modes[i].max && i > 0 {
                self.merge_if_touching(i - 1);
            } else if gap > self.modes[i].min {
                self.merge_if_touching(i);
            }
            return Added::Joined;
        }
        let at = self.modes.partition_point(|m| m.max < gap);
        self.modes.insert(at, Mode::single(gap, candidate));
        if self.modes.len() <= self.limit {
            return Added::Opened;
        }
        self.merge_closest();
        Added::Merged
    }

    /// Merges modes `i` and `i + 1` when no more than ε separates them.
    fn merge_if_touching(&mut self, i: usize) {
        if i + 1 >= self.modes.len() {
            return;
        }
        if self.modes[i].max.saturating_add(self.epsilon) >= self.modes[i + 1].min {
            let next = self.modes.remove(i + 1);
            self.modes[i].absorb(&next);
        }
    }

    /// Merges the neighbours whose means are closest by ratio, the measure
    /// the mode sum's valleys are found by.
    fn merge_closest(&mut self) {
        let ratio = |i: usize| self.modes[i + 1].ratio_over(&self.modes[i]);
        let closest =
            (0..self.modes.len().saturating_sub(1)).min_by(|&a, &b| ratio(a).total_cmp(&ratio(b)));
        if let Some(i) = closest {
            let next = self.modes.remove(i + 1);
            self.modes[i].absorb(&next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(m: &Modes) -> Vec<(u64, u64, u64)> {
        m.modes().iter().map(|m| (m.min, m.max, m.count)).collect()
    }

    #[test]
    fn a_gap_inside_or_within_epsilon_joins_and_widens() {
        let mut m = Modes::new(4, 10);
        assert_eq!(m.add(100, false), Added::Opened);
        assert_eq!(m.add(100, false), Added::Joined);
        assert_eq!(m.add(108, false), Added::Joined); // above, within ε
        assert_eq!(m.add(91, true), Added::Joined); // below, within ε
        assert_eq!(ranges(&m), vec![(91, 108, 4)]);
        assert_eq!(m.modes()[0].sum, 399);
        assert_eq!(m.modes()[0].candidates, 1);
        // 11 beyond the edge: a mode of its own.
        assert_eq!(m.add(119, false), Added::Opened);
        assert_eq!(ranges(&m), vec![(91, 108, 4), (119, 119, 1)]);
    }

    #[test]
    fn widening_merges_the_neighbour_it_now_reaches() {
        let mut m = Modes::new(4, 10);
        m.add(100, false);
        m.add(125, false);
        m.add(200, false);
        assert_eq!(m.modes().len(), 3);
        // 110 joins [100,100] from above; 125 is 15 > ε beyond it: both stay.
        m.add(110, false);
        assert_eq!(
            ranges(&m),
            vec![(100, 110, 2), (125, 125, 1), (200, 200, 1)]
        );
        // 116 is within ε of 110 (joins the first mode) and its new max
        // 116 is within ε of 125: the two merge.
        m.add(116, false);
        assert_eq!(ranges(&m), vec![(100, 125, 4), (200, 200, 1)]);
        assert_eq!(m.modes()[0].sum, 100 + 110 + 116 + 125);
        // From below: 192 joins 200's mode and reaches nothing.
        m.add(192, false);
        assert_eq!(ranges(&m), vec![(100, 125, 4), (192, 200, 2)]);
        // 140 opens; 133 then joins [100,125] from above and reaches 140.
        m.add(140, false);
        m.add(133, false);
        assert_eq!(ranges(&m), vec![(100, 140, 6), (192, 200, 2)]);
    }

    #[test]
    fn a_full_histogram_merges_its_closest_pair_and_loses_no_gap() {
        let mut m = Modes::new(3, 5);
        m.add(10, false);
        m.add(1_000, false);
        m.add(5_000, true);
        // 1_200 is near none: it opens, and 1_000 and 1_200 (ratio 1.2)
        // merge, not 10 and 1_000 (100) or 1_200 and 5_000 (4.2).
        assert_eq!(m.add(1_200, true), Added::Merged);
        assert_eq!(
            ranges(&m),
            vec![(10, 10, 1), (1_000, 1_200, 2), (5_000, 5_000, 1)]
        );
        assert_eq!(m.modes()[1].sum, 2_200);
        assert_eq!(m.modes()[1].candidates, 1);
        // Near an existing mode still joins.
        assert_eq!(m.add(1_204, false), Added::Joined);
        let total: u64 = m.modes().iter().map(|m| m.sum).sum();
        assert_eq!(total, 10 + 1_000 + 5_000 + 1_200 + 1_204);
        m.clear();
        assert!(m.modes().is_empty());
    }

    #[test]
    fn new_modes_keep_ascending_order() {
        let mut m = Modes::new(5, 1);
        for g in [500, 100, 300, 200, 400] {
            m.add(g, false);
        }
        let mins: Vec<u64> = m.modes().iter().map(|m| m.min).collect();
        assert_eq!(mins, vec![100, 200, 300, 400, 500]);
    }
}
