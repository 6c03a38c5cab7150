//! One clock for both scheduling and stamping.
//!
//! Deadlines need a monotonic clock (wall-clock steps would break the rate),
//! while probe payloads need Unix time so that the collector can relate them
//! to switch timestamps. Anchoring the monotonic clock to Unix time once gives
//! both from a single cheap read per batch.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    unix_start_ns: u64,
}

impl Clock {
    /// Starts the clock at zero, now.
    pub fn start() -> Self {
        let unix_start_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Self {
            start: Instant::now(),
            unix_start_ns,
        }
    }

    /// Nanoseconds since [`Clock::start`].
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// The Unix time (ns) of the clock reading `t`.
    pub fn unix_ns(&self, t: u64) -> u64 {
        self.unix_start_ns + t
    }
}
