//! A service instance's workers: who takes a request, and when it can
//! start, so that requests queue behind each other and, with several
//! workers, overtake each other.

/// One worker of a service instance: a request holds it for its own work
/// and one that finds it busy waits, so requests queue behind each other
/// (and behind a faulty service's slow ones). Requests are played in
/// arrival order, so the queue is FIFO by request.
#[derive(Debug, Default, Clone)]
struct Worker {
    /// Busy intervals (start, end), sorted by start.
    busy: Vec<(i64, i64)>,
}

impl Worker {
    /// The first moment at or after `arrival` that the worker is free for
    /// `work`, and where that interval goes in `busy`.
    fn free_at(&self, arrival: i64, work: i64) -> (i64, usize) {
        let mut start = arrival;
        let mut at = self.busy.len();
        for (i, &(s, e)) in self.busy.iter().enumerate() {
            if e <= start {
                continue;
            }
            if s >= start + work {
                at = i;
                break;
            }
            start = e;
        }
        (start, at)
    }

    /// Holds the worker for `work` from [`Worker::free_at`]; returns the
    /// start.
    fn hold(&mut self, arrival: i64, work: i64) -> i64 {
        let (start, at) = self.free_at(arrival, work);
        self.busy.insert(at, (start, start + work));
        start
    }

    /// Forgets intervals over before `t` (no later request reaches back).
    fn forget(&mut self, t: i64) {
        self.busy.retain(|&(_, e)| e > t);
    }
}

/// A service instance's workers: a request takes the one that can start
/// it first (the lowest-numbered on a tie), so with one worker this is a
/// FIFO queue and with several a later request overtakes an earlier, longer
/// one.
#[derive(Debug, Clone)]
pub(super) struct Pool {
    workers: Vec<Worker>,
}

impl Pool {
    pub fn new(n: u32) -> Self {
        Pool {
            workers: (0..n.max(1)).map(|_| Worker::default()).collect(),
        }
    }

    /// Takes a worker for `work` from `arrival`: its start and which one.
    pub fn hold(&mut self, arrival: i64, work: i64) -> (i64, u32) {
        let (k, _) = self
            .workers
            .iter()
            .enumerate()
            .min_by_key(|(k, w)| (w.free_at(arrival, work).0, *k))
            .unwrap_or_else(|| unreachable!("a pool has a worker"));
        (self.workers[k].hold(arrival, work), k as u32)
    }

    pub fn forget(&mut self, t: i64) {
        self.workers.iter_mut().for_each(|w| w.forget(t));
    }
}

#[cfg(test)]
mod tests {
    use super::{Pool, Worker};

    #[test]
    fn a_pool_lets_a_short_request_overtake_a_long_one() {
        let mut one = Pool::new(1);
        assert_eq!(one.hold(0, 100), (0, 0));
        assert_eq!(one.hold(10, 5), (100, 0));
        let mut two = Pool::new(2);
        assert_eq!(two.hold(0, 100), (0, 0));
        // Arrived later, done first: on the second worker.
        assert_eq!(two.hold(10, 5), (10, 1));
        // Both busy: waits for the first to free up (the second, at 15).
        assert_eq!(two.hold(12, 20), (15, 1));
        assert_eq!(two.hold(14, 20), (35, 1));
    }

    #[test]
    fn a_busy_worker_makes_requests_wait_and_fills_gaps() {
        let mut w = Worker::default();
        assert_eq!(w.hold(0, 10), 0);
        // Arrives while the first is served: waits for it.
        assert_eq!(w.hold(5, 10), 10);
        // Free from 20 on.
        assert_eq!(w.hold(30, 5), 30);
        // Fits the gap 20..30.
        assert_eq!(w.hold(18, 4), 20);
        // Does not fit 24..30: after 35.
        assert_eq!(w.hold(24, 8), 35);
        w.forget(25);
        assert_eq!(w.busy, vec![(30, 35), (35, 43)]);
    }
}
