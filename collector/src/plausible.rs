//! Could a probe's numbers have come from our switches at all?
//!
//! A probe that parses and follows its plan can still carry numbers no
//! switch running `sr_int.p4` writes: a bit flipped on the way (the UDP
//! checksum is zero by design, so nothing below us notices), a generator
//! with a broken clock, or a forged datagram. One such send time stretches a
//! run over decades and every query and picture with it, so the collector
//! refuses what is impossible and counts it, each under its own reason.
//!
//! What is checked is what the program guarantees, no more: switch clocks
//! are per switch (bmv2 counts from its own start), so records of different
//! switches are not compared with each other.

use crate::parse::{Probe, Reject};
use std::time::Duration;

/// The send-time window `collect` uses unless told otherwise.
pub const DEFAULT_SEND_WINDOW: Duration = Duration::from_secs(10);

/// Queue depths fit v1model's `enq_qdepth`, a `bit<19>`.
pub const QDEPTH_LIMIT: u32 = 1 << 19;

/// bmv2 truncates each timestamp to µs on its own, so a queueing delay may
/// exceed the time between the truncated ingress and egress stamps by one.
const TRUNCATION_US: u64 = 1;

/// What the collector accepts beyond what the plan fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plausibility {
    /// Most a send time (generator clock) may lie from the receive time
    /// (collector clock), either way: one-way delay plus clock skew. Also
    /// bounds the time a probe spends inside the switches. `None` accepts
    /// any, for replaying probes recorded long ago.
    pub send_window: Option<Duration>,
}

impl Default for Plausibility {
    fn default() -> Self {
        Self {
            send_window: Some(DEFAULT_SEND_WINDOW),
        }
    }
}

impl Plausibility {
    /// Accepts probes from any time (still checking each hop's own numbers).
    pub const fn any_time() -> Self {
        Self { send_window: None }
    }

    /// Judges `p`; the reason names the first impossible number.
    pub fn check(&self, p: &Probe) -> Result<(), Reject> {
        let window_ns = self
            .send_window
            .map(|w| u64::try_from(w.as_nanos()).unwrap_or(u64::MAX));
        if window_ns.is_some_and(|w| p.send_ns.abs_diff(p.recv_ns) > w) {
            return Err(Reject::SendTime);
        }
        let mut inside_us: u64 = 0;
        for r in &p.records {
            if r.enq_qdepth >= QDEPTH_LIMIT {
                return Err(Reject::QueueDepth);
            }
            // Both stamps come from one switch clock: egress follows ingress,
            // and the queue wait lies between them.
            let stay = r
                .egress_ts
                .checked_sub(r.ingress_ts)
                .ok_or(Reject::HopTimes)?;
            if u64::from(r.deq_timedelta) > stay + TRUNCATION_US {
                return Err(Reject::HopTimes);
            }
            inside_us = inside_us.saturating_add(stay);
        }
        if window_ns.is_some_and(|w| inside_us.saturating_mul(1_000) > w) {
            return Err(Reject::HopTimes);
        }
        Ok(())
    }
}

/// A send-time window that is not a number of seconds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("send-time window {0:?}: give seconds (at most {MAX_WINDOW_S}), or 0 or `off` to accept any send time")]
pub struct BadWindow(String);

/// Widest window a flag may ask for: a day, far beyond any clock skew.
pub const MAX_WINDOW_S: f64 = 86_400.0;

/// Seconds as a flag gives them; `0` or `off`: [`Plausibility::any_time`].
impl std::str::FromStr for Plausibility {
    type Err = BadWindow;

    fn from_str(s: &str) -> Result<Self, BadWindow> {
        if s == "off" {
            return Ok(Self::any_time());
        }
        match s.parse::<f64>() {
            Ok(0.0) => Ok(Self::any_time()),
            Ok(secs) if secs > 0.0 && secs <= MAX_WINDOW_S => Ok(Self {
                send_window: Some(Duration::from_secs_f64(secs)),
            }),
            _ => Err(BadWindow(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_core::wire::IntRecordRepr;

    const NOW: u64 = 1_800_000_000_000_000_000;

    fn probe(send_ns: u64, records: Vec<IntRecordRepr>) -> Probe {
        Probe {
            path_id: 1,
            sequence: 0,
            send_ns,
            recv_ns: NOW,
            records,
        }
    }

    fn hop(ingress_ts: u64, egress_ts: u64, deq_timedelta: u32, enq_qdepth: u32) -> IntRecordRepr {
        IntRecordRepr {
            ingress_ts,
            egress_ts,
            deq_timedelta,
            enq_qdepth,
            ..IntRecordRepr::default()
        }
    }

    #[test]
    fn send_times_outside_the_window_are_refused() {
        let p = Plausibility::default();
        let s = 1_000_000_000;
        for ok in [NOW, NOW - 10 * s, NOW + 10 * s, NOW - 3] {
            assert_eq!(p.check(&probe(ok, vec![])), Ok(()), "{ok}");
        }
        for bad in [
            0,
            1_000_000_000_000_000_000,
            u64::MAX,
            NOW - 10 * s - 1,
            NOW + 86_400 * s,
        ] {
            assert_eq!(p.check(&probe(bad, vec![])), Err(Reject::SendTime), "{bad}");
        }
        assert_eq!(Plausibility::any_time().check(&probe(0, vec![])), Ok(()));
    }

    #[test]
    fn windows_from_flags() {
        assert_eq!("10".parse(), Ok(Plausibility::default()));
        assert_eq!(
            "0.5".parse::<Plausibility>().unwrap().send_window,
            Some(Duration::from_millis(500))
        );
        assert_eq!("off".parse(), Ok(Plausibility::any_time()));
        assert_eq!("0".parse(), Ok(Plausibility::any_time()));
        for bad in ["-1", "NaN", "inf", "1e9", "10s", ""] {
            assert!(bad.parse::<Plausibility>().is_err(), "{bad}");
        }
    }

    #[test]
    fn each_hop_must_be_possible_on_one_switch_clock() {
        let p = Plausibility::default();
        let check = |h| p.check(&probe(NOW, vec![hop(100, 200, 0, 0), h]));
        assert_eq!(check(hop(5, 5, 0, 0)), Ok(()));
        assert_eq!(check(hop(5, 50, 46, 63)), Ok(()), "one µs of truncation");
        assert_eq!(check(hop(6, 5, 0, 0)), Err(Reject::HopTimes));
        assert_eq!(check(hop(5, 50, 47, 0)), Err(Reject::HopTimes));
        assert_eq!(check(hop(5, 5, 0, QDEPTH_LIMIT)), Err(Reject::QueueDepth));
        // Eleven seconds inside one switch cannot fit a ten-second window.
        assert_eq!(check(hop(0, 11_000_000, 0, 0)), Err(Reject::HopTimes));
        assert_eq!(
            Plausibility::any_time().check(&probe(NOW, vec![hop(0, 11_000_000, 0, 0)])),
            Ok(())
        );
    }
}
