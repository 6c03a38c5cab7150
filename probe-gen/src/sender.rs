//! The send loop: waits for each deadline, batches what is due, and keeps
//! count.
//!
//! Waiting sleeps until shortly before a deadline and spins the rest, because
//! a Linux sleep overshoots by tens of microseconds (timer slack) while a
//! spin on the clock is accurate to well under one. When the loop falls
//! behind (high rates, or the thread was descheduled), everything already due
//! leaves in one batch instead of one system call each; deadlines stay
//! absolute, so the rate catches up instead of drifting.

use crate::clock::Clock;
use crate::frames::FrameSource;
use crate::schedule::Schedule;
use crate::stats::Report;
use crate::transport::Transport;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Most frames per batch.
pub const MAX_BATCH: usize = 64;

/// Below this distance to a deadline the loop spins instead of sleeping.
const SPIN_NS: u64 = 100_000;

/// Longest single sleep, so that a stop request and progress reports are
/// served promptly even at 1 pps.
const MAX_SLEEP: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Most frames handed to the transport at once (1..=[`MAX_BATCH`]).
    pub batch: usize,
    /// How often the progress callback runs.
    pub progress_every: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            batch: MAX_BATCH,
            progress_every: Duration::from_secs(1),
        }
    }
}

/// Sends what `schedule` holds until it is empty, its duration has passed
/// (packets still due then are dropped: a 10 s run lasts 10 s even if the
/// machine could not keep up), or `stop` is set, calling
/// `progress` every `opts.progress_every` with the counts so far.
pub fn run<S, T>(
    schedule: &mut Schedule,
    source: &mut S,
    transport: &mut T,
    stop: &AtomicBool,
    opts: &Options,
    progress: &mut dyn FnMut(&Report),
) -> Report
where
    S: FrameSource + ?Sized,
    T: Transport + ?Sized,
{
    let batch = opts.batch.clamp(1, MAX_BATCH);
    let every_ns = (opts.progress_every.as_nanos() as u64).max(1);
    let mut bufs = vec![vec![0u8; source.max_len()]; batch];
    let mut lens = [0usize; MAX_BATCH];
    let mut flow_of = [0usize; MAX_BATCH];
    let mut report = Report {
        sent_per_flow: vec![0; schedule.flows()],
        ..Report::default()
    };
    let clock = Clock::start();
    let mut next_progress = every_ns;
    loop {
        if stop.load(Ordering::Relaxed) {
            report.interrupted = true;
            break;
        }
        let Some(due) = schedule.peek() else { break };
        let mut now = clock.now_ns();
        if schedule.end_ns().is_some_and(|end| now >= end) {
            break;
        }
        if now >= next_progress {
            report.elapsed = Duration::from_nanos(now);
            progress(&report);
            next_progress = (now / every_ns + 1) * every_ns;
        }
        if due > now {
            let wait = due - now;
            if wait > SPIN_NS {
                std::thread::sleep(Duration::from_nanos(wait - SPIN_NS).min(MAX_SLEEP));
                continue;
            }
            while now < due {
                std::hint::spin_loop();
                now = clock.now_ns();
            }
        }

        let unix_ns = clock.unix_ns(now);
        let mut n = 0;
        while n < batch {
            match schedule.peek() {
                Some(d) if d <= now => {}
                _ => break,
            }
            let Some((deadline, flow)) = schedule.pop() else {
                break;
            };
            lens[n] = source.write(flow, unix_ns, &mut bufs[n]);
            flow_of[n] = flow;
            report.lateness.record(now - deadline);
            n += 1;
        }
        let mut frames: [&[u8]; MAX_BATCH] = [&[]; MAX_BATCH];
        for ((f, b), len) in frames.iter_mut().zip(&bufs).zip(&lens).take(n) {
            *f = &b[..*len];
        }
        let mut i = 0;
        while i < n {
            match transport.send_batch(&frames[i..n]) {
                Ok(k) if k > 0 => {
                    for &f in &flow_of[i..i + k] {
                        report.sent_per_flow[f] += 1;
                    }
                    report.sent += k as u64;
                    i += k;
                }
                refused => {
                    if report.errors == 0 {
                        match refused {
                            Err(e) => tracing::warn!(
                                "send failed: {e} (counting further failures silently)"
                            ),
                            Ok(_) => tracing::warn!(
                                "transport accepted nothing (counting further failures silently)"
                            ),
                        }
                    }
                    report.errors += 1;
                    i += 1;
                }
            }
        }
    }
    if let Err(e) = transport.finish() {
        tracing::warn!("{e}");
    }
    report.elapsed = Duration::from_nanos(clock.now_ns());
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{Endpoints, ProbeSource};
    use crate::schedule::{Interarrival, Limit, Spacing};
    use intpath_core::wire::{MacAddr, ProbeRepr};
    use std::io;

    /// Keeps what it is given; always refuses probes whose sequence number
    /// is a multiple of `refuse_every`.
    #[derive(Default)]
    struct Recorder {
        frames: Vec<Vec<u8>>,
        calls: usize,
        refuse_every: Option<u32>,
    }

    impl Transport for Recorder {
        fn send_batch(&mut self, frames: &[&[u8]]) -> io::Result<usize> {
            self.calls += 1;
            for (i, f) in frames.iter().enumerate() {
                let seq = ProbeRepr::parse(f).unwrap().payload.sequence;
                if self.refuse_every.is_some_and(|n| seq.is_multiple_of(n)) {
                    return if i == 0 {
                        Err(io::Error::other("full"))
                    } else {
                        Ok(i)
                    };
                }
                self.frames.push(f.to_vec());
            }
            Ok(frames.len())
        }
    }

    fn run_probes(rate: f64, count: u64, t: &mut Recorder, stop: bool) -> Report {
        let ends = Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr::BROADCAST,
            src_ip: "10.0.0.1".parse().unwrap(),
        };
        let mut source = ProbeSource::new(&[1, 2], ends, "10.0.0.9".parse().unwrap(), 8);
        let gaps = (0..2)
            .map(|i| Interarrival::new(rate, Spacing::Constant, i).unwrap())
            .collect();
        let limit = Limit {
            count_per_flow: Some(count),
            duration: None,
        };
        let mut schedule = Schedule::new(gaps, limit);
        let flag = AtomicBool::new(stop);
        run(
            &mut schedule,
            &mut source,
            t,
            &flag,
            &Options::default(),
            &mut |_| {},
        )
    }

    #[test]
    fn behind_schedule_frames_leave_in_batches_and_in_order() {
        let mut t = Recorder::default();
        // 10 M pps per path: every deadline has passed by the time it is seen.
        let r = run_probes(1e7, 2000, &mut t, false);
        assert_eq!((r.sent, r.errors), (4000, 0));
        assert_eq!(r.sent_per_flow, [2000, 2000]);
        assert!(t.calls <= 4000 / 16, "{} calls for 4000 frames", t.calls);
        let mut next = [0u32; 2];
        for f in &t.frames {
            let p = ProbeRepr::parse(f).unwrap();
            let i = usize::from(p.sr.path_id - 1);
            assert_eq!(p.payload.sequence, next[i]);
            next[i] += 1;
        }
    }

    #[test]
    fn refused_frames_are_counted_and_skipped() {
        let mut t = Recorder {
            refuse_every: Some(5),
            ..Recorder::default()
        };
        let r = run_probes(1e7, 500, &mut t, false);
        assert_eq!((r.sent, r.errors), (800, 200));
        assert_eq!(t.frames.len(), 800);
        assert_eq!(r.sent_per_flow.iter().sum::<u64>(), 800);
    }

    #[test]
    fn a_stop_request_ends_the_run() {
        let mut t = Recorder::default();
        let r = run_probes(1.0, 10, &mut t, true);
        assert!(r.interrupted);
        assert_eq!(r.sent, 0);
        assert!(t.frames.is_empty());
    }
}
