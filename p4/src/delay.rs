//! A fixed delay on a port's egress, the reference switch's stand-in for
//! `tc netem delay` (which needs a kernel module, and which AF_PACKET sends
//! with `PACKET_QDISC_BYPASS` skip anyway). A frame that passed egress is
//! held as if on a long wire: after the INT record is written, so the
//! delay shows in the next hop's ingress time, never as queueing. Frames
//! leave in order, each at its arrival time plus the delay in force then.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The longest delay accepted (ms): a frame held longer outlives every
/// measurement window.
pub const MAX_DELAY_MS: f64 = 10_000.0;
/// Frames held at most per port (netem's default limit is 1,000); more are
/// dropped and counted.
pub const MAX_HELD: usize = 65_536;

/// A delay that is negative, too long or not a number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("a delay must be from 0 to {MAX_DELAY_MS} ms, not {0}")]
pub struct BadDelay(pub f64);

#[derive(Debug, Default)]
pub struct PortDelay {
    /// µs; 0 = frames leave at once.
    us: AtomicU64,
    held: Mutex<VecDeque<(Instant, Vec<u8>)>>,
    ready: Condvar,
    drops: AtomicU64,
}

impl PortDelay {
    fn lock(&self) -> MutexGuard<'_, VecDeque<(Instant, Vec<u8>)>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_ms(&self, ms: f64) -> Result<(), BadDelay> {
        if !(0.0..=MAX_DELAY_MS).contains(&ms) {
            return Err(BadDelay(ms));
        }
        self.us.store((ms * 1000.0).round() as u64, Relaxed);
        Ok(())
    }

    pub fn ms(&self) -> f64 {
        self.us.load(Relaxed) as f64 / 1000.0
    }

    /// Whether frames are held (checked before every send).
    pub fn active(&self) -> bool {
        self.us.load(Relaxed) != 0
    }

    /// Frames dropped because [`MAX_HELD`] were held.
    pub fn drops(&self) -> u64 {
        self.drops.load(Relaxed)
    }

    /// Holds copies of `frames` until now plus the delay.
    pub fn hold(&self, frames: &[&[u8]]) {
        let due = Instant::now() + Duration::from_micros(self.us.load(Relaxed));
        let mut held = self.lock();
        for f in frames {
            if held.len() >= MAX_HELD {
                self.drops.fetch_add(1, Relaxed);
                continue;
            }
            held.push_back((due, f.to_vec()));
        }
        drop(held);
        self.ready.notify_one();
    }

    /// Waits up to `idle` for frames to come due and moves those due into
    /// `out`.
    pub fn take_due(&self, out: &mut Vec<Vec<u8>>, idle: Duration) {
        let mut held = self.lock();
        let now = Instant::now();
        let wait = match held.front() {
            Some((due, _)) => due.saturating_duration_since(now),
            None => idle,
        };
        if !wait.is_zero() {
            held = self
                .ready
                .wait_timeout(held, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        let now = Instant::now();
        while held.front().is_some_and(|(due, _)| *due <= now) {
            if let Some((_, f)) = held.pop_front() {
                out.push(f);
            }
        }
    }

    /// Wakes the sending thread (to let it see a shutdown).
    pub fn wake(&self) {
        let _held = self.lock();
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_leave_in_order_after_the_delay() {
        let d = PortDelay::default();
        assert!(!d.active());
        d.set_ms(30.0).unwrap();
        assert!(d.active() && d.ms() == 30.0);
        let t0 = Instant::now();
        d.hold(&[b"a", b"b"]);
        let mut out = Vec::new();
        while out.len() < 2 && t0.elapsed() < Duration::from_secs(2) {
            d.take_due(&mut out, Duration::from_millis(5));
        }
        let waited = t0.elapsed();
        assert_eq!(out, [b"a".to_vec(), b"b".to_vec()]);
        assert!(waited >= Duration::from_millis(30), "{waited:?}");
        assert!(waited < Duration::from_millis(500), "{waited:?}");
        for bad in [-1.0, MAX_DELAY_MS + 1.0, f64::NAN] {
            assert!(d.set_ms(bad).is_err(), "{bad}");
        }
        assert_eq!(d.ms(), 30.0);
    }
}
