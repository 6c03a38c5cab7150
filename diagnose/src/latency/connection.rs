//! One connection, one direction: the client's segments towards the server,
//! turned into gaps and then, epoch by epoch, into estimates. Only this
//! direction is needed (Pirate's point: under asymmetric routing or direct
//! server return the responses never pass the vantage point).

use super::estimate::{proportional_mode_sum, Basis, Estimate};
use super::modes::Modes;
use super::window::{batches_fit, Window};
use super::Config;

/// The smallest segment every TCP must accept (RFC 9293's default MSS): a
/// shorter segment is never a full one, whatever the connection's MSS.
const MIN_FULL_SIZE: u32 = 536;

/// A client segment as the tracker sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// Capture time, ns since the Unix epoch.
    pub at_ns: i64,
    /// Transport payload bytes (from the IP length, so a capture cut short
    /// by its snap length still counts what was sent).
    pub payload: u32,
    /// A TCP segment carrying nothing but an acknowledgement.
    pub pure_ack: bool,
    /// The MSS option of a SYN.
    pub mss: Option<u16>,
}

/// What one connection did in one epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochResult {
    /// Epoch index: the epoch starts at `epoch × epoch length` after the
    /// Unix epoch, so every connection shares the same boundaries.
    pub epoch: i64,
    /// `None` when no mode was left below the drop threshold.
    pub estimate: Option<Estimate>,
    /// Gaps counted into the modes.
    pub counted: u64,
    /// Segments not counted: out of time order.
    pub discarded: u64,
    /// Gaps at or above the idle threshold, never counted.
    pub idle: u64,
    /// Pure ACKs skipped over (their gaps coalesced into the next one).
    pub pure_acks: u64,
}

/// Gap state of one connection's client direction.
#[derive(Debug, Clone)]
pub struct Tracker {
    modes: Modes,
    epoch: Option<i64>,
    /// Time of the last segment that counted, and whether it was short.
    last: Option<(i64, bool)>,
    syn_mss: Option<u32>,
    largest: u32,
    counted: u64,
    late: u64,
    idle: u64,
    pure_acks: u64,
    window: Window,
    /// This epoch's gaps below the retransmission timeout: count and sum (ns).
    short_gaps: (u64, u64),
}

impl Tracker {
    pub fn new(c: &Config) -> Self {
        Tracker {
            modes: Modes::new(c.modes, duration_ns(c.epsilon)),
            epoch: None,
            last: None,
            syn_mss: None,
            largest: 0,
            counted: 0,
            late: 0,
            idle: 0,
            pure_acks: 0,
            window: Window::default(),
            short_gaps: (0, 0),
        }
    }

    /// Takes the next client segment; returns the previous epoch's result
    /// when `s` is the first segment of a later epoch.
    pub fn observe(&mut self, s: Sent, c: &Config) -> Option<EpochResult> {
        let epoch = s.at_ns.div_euclid(epoch_ns(c));
        let mut closed = None;
        match self.epoch {
            Some(cur) if epoch < cur => {
                self.late += 1;
                return None;
            }
            Some(cur) if epoch > cur => {
                closed = self.close(c);
                self.epoch = Some(epoch);
            }
            Some(_) => {}
            None => self.epoch = Some(epoch),
        }
        if s.pure_ack {
            // Coalesced: the gap runs from the segment before to the next.
            self.pure_acks += 1;
            return closed;
        }
        if let Some(mss) = s.mss {
            self.syn_mss = Some(u32::from(mss));
        }
        self.largest = self.largest.max(s.payload);
        let full = self.syn_mss.unwrap_or(self.largest.max(MIN_FULL_SIZE));
        let short = s.payload < full;
        match self.last {
            Some((t, _)) if s.at_ns < t => {
                self.late += 1;
                return closed;
            }
            Some((t, after_short)) => {
                let gap = (s.at_ns - t) as u64;
                if gap >= duration_ns(c.idle) {
                    self.idle += 1;
                } else {
                    self.modes.add(gap, after_short);
                    self.counted += 1;
                    if gap < duration_ns(c.rto) {
                        self.short_gaps.0 += 1;
                        self.short_gaps.1 += gap;
                    }
                }
            }
            None => {}
        }
        if s.payload > 0 {
            self.window.request(s.at_ns);
        }
        self.last = Some((s.at_ns, short));
        closed
    }

    /// The result of the epoch in progress (at the end of the capture).
    pub fn finish(&mut self, c: &Config) -> Option<EpochResult> {
        self.close(c)
    }

    /// Summarises the current epoch and empties the histogram; `None` when
    /// the epoch saw no gap at all.
    fn close(&mut self, c: &Config) -> Option<EpochResult> {
        let epoch = self.epoch?;
        let r = EpochResult {
            epoch,
            estimate: self.estimate(c),
            counted: self.counted,
            discarded: self.late,
            idle: self.idle,
            pure_acks: self.pure_acks,
        };
        self.modes.clear();
        (self.counted, self.late, self.idle, self.pure_acks) = (0, 0, 0, 0);
        self.short_gaps = (0, 0);
        (r.counted + r.discarded + r.idle > 0).then_some(r)
    }
}

impl Tracker {
    /// The mode sum, or the window estimate where the mode sum's batches do
    /// not fit the client's window (see [`super::window`]).
    fn estimate(&self, c: &Config) -> Option<Estimate> {
        let e = proportional_mode_sum(self.modes.modes(), duration_ns(c.rto))?;
        let w = self.window.size();
        let (n, sum) = self.short_gaps;
        if batches_fit(e.gaps, e.batches, w) || n == 0 {
            return Some(e);
        }
        Some(Estimate {
            latency_ns: f64::from(w) * sum as f64 / n as f64,
            basis: Basis::Window(w),
            ..e
        })
    }
}

fn duration_ns(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn epoch_ns(c: &Config) -> i64 {
    i64::try_from(c.epoch.as_nanos()).unwrap_or(i64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::Basis;
    use std::time::Duration;

    fn cfg() -> Config {
        Config {
            epoch: Duration::from_secs(1),
            ..Config::default()
        }
    }

    fn data(at_us: i64) -> Sent {
        Sent {
            at_ns: at_us * 1_000,
            payload: 100,
            pure_ack: false,
            mss: None,
        }
    }

    fn ack(at_us: i64) -> Sent {
        Sent {
            payload: 0,
            pure_ack: true,
            ..data(at_us)
        }
    }

    fn run(t: &mut Tracker, c: &Config, segs: &[Sent]) -> Vec<EpochResult> {
        let mut out: Vec<EpochResult> = segs.iter().filter_map(|s| t.observe(*s, c)).collect();
        out.extend(t.finish(c));
        out
    }

    #[test]
    fn a_closed_loop_whose_batches_dissolve_is_read_by_its_window() {
        let c = cfg();
        // Window 4, latency 1000 µs: an opening burst of 4, then the four
        // requests spread evenly over the round (250 µs apart) with a little
        // jitter, so no gap stands out. Little: 4 × 250 µs.
        let mut t = Tracker::new(&c);
        let mut segs: Vec<Sent> = (0..4).map(|i| data(10 + i * 4)).collect();
        segs.extend((1..8000).map(|k| data(1_000 + k * 250 + (k * 37 % 11))));
        let got = run(&mut t, &c, &segs);
        let e = got[1].estimate.expect("an estimate");
        assert_eq!(e.basis, Basis::Window(4));
        assert!((e.latency_ns - 1_000_000.0).abs() < 5_000.0, "{e:?}");
        // Batches of 4 that stay apart: 3 gaps of 5 µs, then the pause.
        let mut t = Tracker::new(&c);
        let segs: Vec<Sent> = (0..3000)
            .flat_map(|b| (0..4).map(move |i| data(b * 1_000 + i * 5)))
            .collect();
        let got = run(&mut t, &c, &segs);
        let e = got[1].estimate.expect("an estimate");
        assert_eq!(e.basis, Basis::ModeSum);
        assert!((e.latency_ns - 1_000_000.0).abs() < 1.0, "{e:?}");
    }

    #[test]
    fn pure_acks_are_coalesced_into_the_gap_that_spans_them() {
        let c = cfg();
        let mut t = Tracker::new(&c);
        // Requests every 1000 µs, with a pure ACK between each pair.
        let mut segs = Vec::new();
        for i in 0..10 {
            segs.push(data(i * 1000));
            segs.push(ack(i * 1000 + 300));
        }
        let r = run(&mut t, &c, &segs);
        assert_eq!(r.len(), 1);
        let e = r[0].estimate.expect("an estimate");
        assert_eq!((r[0].counted, r[0].pure_acks), (9, 10));
        assert!((e.latency_ns - 1_000_000.0).abs() < 1e-6, "{e:?}");
        assert_eq!(e.modes, 1);
    }

    #[test]
    fn batches_of_four_give_the_batch_period() {
        let c = cfg();
        let mut t = Tracker::new(&c);
        // Four requests 5 µs apart, a new batch every 2 ms.
        let segs: Vec<Sent> = (0..40)
            .map(|i| data((i / 4) * 2000 + (i % 4) * 5))
            .collect();
        let r = run(&mut t, &c, &segs);
        let e = r[0].estimate.expect("an estimate");
        // 39 gaps spanning 9 × 2000 + 15 µs (the last batch's own three
        // gaps included), over the 9 inter-batch gaps.
        assert_eq!((e.batches, e.gaps, e.modes), (9, 39, 2));
        assert!((e.latency_ns - 18_015_000.0 / 9.0).abs() < 1e-6, "{e:?}");
    }

    #[test]
    fn full_size_segments_do_not_make_candidates() {
        let c = cfg();
        let mut t = Tracker::new(&c);
        let full = |at_us: i64| Sent {
            payload: 1460,
            mss: None,
            ..data(at_us)
        };
        // A 1460-byte segment, then 400 µs later a short one, then 100 µs
        // later the next batch: the 400 µs gap follows a full segment (the
        // client was still sending), the 100 µs one a short segment.
        let mut segs = Vec::new();
        for i in 0..10 {
            segs.push(full(i * 500));
            segs.push(data(i * 500 + 400));
        }
        let r = run(&mut t, &c, &segs);
        let e = r[0].estimate.expect("an estimate");
        assert!((e.ibg_ns - 100_000.0).abs() < 1e-6, "{e:?}");
        // A SYN's MSS decides what full size is.
        let mut t = Tracker::new(&c);
        let syn = Sent {
            mss: Some(8960),
            payload: 0,
            ..data(0)
        };
        let r = run(&mut t, &c, &[syn, full(1000), full(3000), full(5000)]);
        let e = r[0].estimate.expect("an estimate");
        assert_eq!(e.modes, 2);
        assert!((e.ibg_ns - 2_000_000.0).abs() < 1e-6, "{e:?}");
    }

    #[test]
    fn gaps_belong_to_the_epoch_they_end_in() {
        let c = cfg();
        let mut t = Tracker::new(&c);
        // 800 µs gaps up to 0.9992 s, then 2 ms gaps: the gap that crosses
        // the 1 s boundary (ends at 1.0012 s) counts in epoch 1.
        let mut segs: Vec<Sent> = (0..=1249).map(|i| data(i * 800)).collect();
        segs.extend((0..100).map(|i| data(1_001_200 + i * 2000)));
        let r = run(&mut t, &c, &segs);
        assert_eq!(r.iter().map(|r| r.epoch).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(r[0].counted, 1249);
        assert!((r[0].estimate.expect("epoch 0").latency_ns - 800_000.0).abs() < 1e-6);
        assert_eq!(r[1].counted, 100);
        // epoch 1: one 2000 µs gap from 0.9992 s and 99 more of 2000 µs.
        assert!((r[1].estimate.expect("epoch 1").latency_ns - 2_000_000.0).abs() < 1e-6);
    }

    #[test]
    fn idle_and_timeout_gaps_are_left_out() {
        let c = cfg();
        let mut t = Tracker::new(&c);
        // 1 ms batches, one 300 ms stall (a timeout mode: dropped at the
        // estimate) and one 1.5 s pause (idle: never counted).
        let mut segs: Vec<Sent> = (0..10).map(|i| data(i * 1000)).collect();
        segs.extend((0..10).map(|i| data(309_000 + i * 1000)));
        segs.extend((0..10).map(|i| data(1_818_000 + i * 1000)));
        let r = run(&mut t, &c, &segs);
        assert_eq!(r.len(), 2);
        let e = r[0].estimate.expect("epoch 0");
        assert_eq!((r[0].counted, r[0].idle), (19, 0));
        assert!((e.latency_ns - 1_000_000.0).abs() < 1e-6, "{e:?}");
        assert_eq!(r[1].idle, 1);
        assert_eq!(r[1].counted, 9);
    }

    #[test]
    fn segments_out_of_time_order_are_not_counted() {
        let c = cfg();
        let mut t = Tracker::new(&c);
        let r = run(
            &mut t,
            &c,
            &[data(1000), data(2000), data(1500), data(3000)],
        );
        assert_eq!((r[0].counted, r[0].discarded), (2, 1));
    }
}
