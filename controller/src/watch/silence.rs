//! Noticing that a path's probes stopped arriving.
//!
//! Silence is measured on the watcher's own clock, from the moment the
//! collector's newest stored probe of a path last changed, so neither the
//! probe senders' nor the collector's clocks need to agree with ours.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Tracks, per path of one collector run, how long nothing new arrived.
#[derive(Debug)]
pub struct SilenceTracker {
    limit: Duration,
    run: Option<i64>,
    /// path → (newest probe seen, when it last changed).
    heads: BTreeMap<u16, (Option<i64>, Instant)>,
}

impl SilenceTracker {
    pub fn new(limit: Duration) -> Self {
        Self {
            limit,
            run: None,
            heads: BTreeMap::new(),
        }
    }

    /// Takes one reading of collector run `run`, as (path id, row id of the
    /// newest stored probe if any) pairs, and returns the paths that
    /// have delivered nothing for at least the limit. A path the run has
    /// never delivered counts from the first reading that listed it, so a
    /// fresh run gets the same grace as a fresh probe.
    pub fn observe(
        &mut self,
        run: i64,
        heads: impl IntoIterator<Item = (u16, Option<i64>)>,
        now: Instant,
    ) -> BTreeSet<u16> {
        if self.run != Some(run) {
            self.run = Some(run);
            self.heads.clear();
        }
        let mut silent = BTreeSet::new();
        for (path, newest) in heads {
            let seen = self.heads.entry(path).or_insert((newest, now));
            if seen.0 != newest {
                *seen = (newest, now);
            } else if now.duration_since(seen.1) >= self.limit {
                silent.insert(path);
            }
        }
        silent
    }

    /// Starts every path's clock again (after a replan, the paths are new).
    pub fn restart(&mut self) {
        self.run = None;
        self.heads.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heads(v: &[(u16, Option<i64>)]) -> Vec<(u16, Option<i64>)> {
        v.to_vec()
    }

    #[test]
    fn a_path_is_silent_once_nothing_new_arrived_for_the_limit() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut t = SilenceTracker::new(s);
        assert!(t
            .observe(1, heads(&[(0, Some(5)), (1, None)]), t0)
            .is_empty());
        // Path 0 keeps delivering, path 1 never starts.
        let at = |ms| t0 + Duration::from_millis(ms);
        assert!(t
            .observe(1, heads(&[(0, Some(9)), (1, None)]), at(600))
            .is_empty());
        let silent = t.observe(1, heads(&[(0, Some(9)), (1, None)]), at(1000));
        assert_eq!(silent, BTreeSet::from([1]));
        let silent = t.observe(1, heads(&[(0, Some(9)), (1, None)]), at(1600));
        assert_eq!(silent, BTreeSet::from([0, 1]));
        // Path 1 speaks: no longer silent.
        let silent = t.observe(1, heads(&[(0, Some(9)), (1, Some(10))]), at(1700));
        assert_eq!(silent, BTreeSet::from([0]));
    }

    #[test]
    fn a_new_run_or_a_restart_gives_every_path_fresh_grace() {
        let t0 = Instant::now();
        let mut t = SilenceTracker::new(Duration::from_secs(1));
        let h = heads(&[(0, Some(3))]);
        t.observe(1, h.clone(), t0);
        let late = t0 + Duration::from_secs(5);
        assert!(t.observe(2, h.clone(), late).is_empty());
        t.restart();
        assert!(t
            .observe(2, h.clone(), late + Duration::from_millis(999))
            .is_empty());
        assert_eq!(
            t.observe(2, h.clone(), late + Duration::from_secs(2)),
            BTreeSet::from([0])
        );
    }
}
