//! Random loss on a port's egress, the reference switch's stand-in for
//! `tc netem loss` (which needs a kernel module that AF_PACKET sends with
//! `PACKET_QDISC_BYPASS` would skip anyway). A frame that passed egress is
//! lost as if on the wire: counted as transmitted by the program, never
//! sent. The chance is an atomic threshold, so the data path takes no lock.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Loss chance out of 2^32; `u32::MAX` means every frame.
#[derive(Debug, Default)]
pub struct PortLoss {
    threshold: AtomicU32,
    drops: AtomicU64,
}

/// A loss percentage outside 0–100 (or not a number).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("a loss must be a percentage from 0 to 100, not {0}")]
pub struct BadPercent(pub f64);

impl PortLoss {
    /// Sets the chance that a frame is lost, in percent (0 = none).
    pub fn set_percent(&self, pct: f64) -> Result<(), BadPercent> {
        if !(0.0..=100.0).contains(&pct) {
            return Err(BadPercent(pct));
        }
        let threshold = (pct / 100.0 * 4_294_967_296.0).round().min(u32::MAX as f64) as u32;
        self.threshold.store(threshold, Relaxed);
        Ok(())
    }

    /// The chance in percent, to three decimals.
    pub fn percent(&self) -> f64 {
        let t = f64::from(self.threshold.load(Relaxed));
        (t * 100_000.0 / 4_294_967_296.0).round() / 1000.0
    }

    /// Frames lost so far.
    pub fn drops(&self) -> u64 {
        self.drops.load(Relaxed)
    }

    /// Whether the next frame is lost (and counted as such).
    pub fn lose(&self) -> bool {
        let t = self.threshold.load(Relaxed);
        let lost = t != 0 && (t == u32::MAX || fastrand::u32(..) < t);
        if lost {
            self.drops.fetch_add(1, Relaxed);
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_lost_follows_the_percentage() {
        let loss = PortLoss::default();
        assert!(!(0..10_000).any(|_| loss.lose()));
        loss.set_percent(25.0).unwrap();
        assert_eq!(loss.percent(), 25.0);
        let lost = (0..100_000).filter(|_| loss.lose()).count();
        assert!((23_000..27_000).contains(&lost), "{lost} of 100000 at 25 %");
        assert_eq!(loss.drops(), lost as u64);
        loss.set_percent(100.0).unwrap();
        assert_eq!(loss.percent(), 100.0);
        assert!((0..10_000).all(|_| loss.lose()));
        for bad in [-1.0, 100.5, f64::NAN] {
            assert!(loss.set_percent(bad).is_err(), "{bad}");
        }
        assert_eq!(loss.percent(), 100.0);
    }
}
