//! What held packets between two switches beyond the usual: a link that
//! delays (a long or congested wire outside the program's queues, a
//! `netem` delay, a receive queue the switch program never sees) adds
//! nothing to the queueing delay INT reports, only to the time from one
//! switch's egress stamp to the next switch's ingress stamp.
//!
//! That wire time is read per link and moment as a change from the link's
//! own usual level, for three reasons:
//! - Two switches' clocks differ by an unknown constant, so only changes
//!   of a link's wire time mean anything.
//! - A delaying link delays every packet and lifts even the fastest probes
//!   of a short window, while a switch process stalled now and then on a
//!   loaded machine lifts a few consecutive probes only: each moment's
//!   level is the lower quartile of the probes around it, which the
//!   stalls leave where it was.
//! - A machine loaded for a while slows every switch's receive path: the
//!   links' median change at each moment is taken off each link's.

/// Spacing of the moments a level is kept for...
const STEP_NS: i64 = 100_000_000;
/// ... unless a run (or a probe with a wild send time) spans more than
/// this many of them: then they are spaced wider, and memory stays bounded.
const MAX_MOMENTS: i64 = 100_000;
/// Probes within this of a moment set its level.
const HALF_WINDOW_NS: i64 = 250_000_000;
/// A moment with fewer probes around it has no level.
const MIN_PROBES: usize = 4;
/// At most this many probes, evenly taken, set a level: a quartile needs
/// no more, and a fast probe rate would otherwise cost its square.
const MAX_PROBES: usize = 64;
/// Changes smaller than this are the stamps' microsecond resolution and
/// the switches' scheduling, not a link.
const FLOOR_NS: f64 = 100_000.0;
/// A link's usual level: this quantile of its moments' levels, so that a
/// link delaying for up to three quarters of the run still has moments
/// that show its usual level.
const USUAL: f64 = 0.25;

/// Per link, the wire time it added beyond its usual, per moment.
#[derive(Debug, Default)]
pub(super) struct Wire {
    start: i64,
    step: i64,
    /// `excess[link][k]`: ns added at `start + k·step`.
    excess: Vec<Vec<f64>>,
}

impl Wire {
    /// From each link's probes, `(moment, wire time)` in ns, sorted by
    /// moment (as the store gives them, and as the queueing samples beside
    /// them are kept).
    pub fn new(per_link: Vec<Vec<(i64, i64)>>) -> Self {
        let times = per_link.iter().flatten().map(|&(t, _)| t);
        let (Some(start), Some(end)) = (times.clone().min(), times.max()) else {
            return Wire::default();
        };
        let span = end.saturating_sub(start);
        let step = STEP_NS.max(span / MAX_MOMENTS + 1);
        let moments = (span / step + 1) as usize;
        let levels: Vec<Vec<Option<f64>>> = per_link
            .iter()
            .map(|s| {
                (0..moments)
                    .map(|k| level(s, start.saturating_add(k as i64 * step)))
                    .collect()
            })
            .collect();
        let change: Vec<Vec<Option<f64>>> = levels
            .iter()
            .map(|row| {
                let mut seen: Vec<f64> = row.iter().flatten().copied().collect();
                let usual = quantile(&mut seen, USUAL);
                row.iter()
                    .map(|x| x.zip(usual).map(|(x, u)| x - u))
                    .collect()
            })
            .collect();
        let common: Vec<f64> = (0..moments)
            .map(|k| {
                let mut at: Vec<f64> = change.iter().filter_map(|row| row[k]).collect();
                quantile(&mut at, 0.5).unwrap_or(0.0).max(0.0)
            })
            .collect();
        let excess = change
            .iter()
            .map(|row| {
                row.iter()
                    .zip(&common)
                    .map(|(x, c)| match x.map(|x| x - c) {
                        Some(e) if e >= FLOOR_NS => e,
                        _ => 0.0,
                    })
                    .collect()
            })
            .collect();
        Wire {
            start,
            step,
            excess,
        }
    }

    /// The wire time `link` added beyond its usual, on average over the
    /// run, ns.
    pub fn mean(&self, link: u32) -> f64 {
        match self.excess.get(link as usize).filter(|r| !r.is_empty()) {
            Some(row) => row.iter().sum::<f64>() / row.len() as f64,
            None => 0.0,
        }
    }

    /// The wire time `link` added beyond its usual at `at_ns`, ns.
    pub fn at(&self, link: u32, at_ns: i64) -> f64 {
        let Some(row) = self.excess.get(link as usize).filter(|r| !r.is_empty()) else {
            return 0.0;
        };
        let k = (at_ns.saturating_sub(self.start) as f64 / self.step as f64).round();
        row[(k.max(0.0) as usize).min(row.len() - 1)]
    }
}

/// The lower quartile of the wire times of the probes (sorted by time)
/// within [`HALF_WINDOW_NS`] of `at`.
fn level(samples: &[(i64, i64)], at: i64) -> Option<f64> {
    let a = samples.partition_point(|&(t, _)| t < at.saturating_sub(HALF_WINDOW_NS));
    let b = samples.partition_point(|&(t, _)| t <= at.saturating_add(HALF_WINDOW_NS));
    let near = &samples[a..b];
    if near.len() < MIN_PROBES {
        return None;
    }
    let stride = near.len().div_ceil(MAX_PROBES);
    let mut w: Vec<f64> = near
        .iter()
        .step_by(stride)
        .map(|&(_, w)| w as f64)
        .collect();
    quantile(&mut w, 0.25)
}

/// The `q` quantile of `v` (the element at rank `q·(n-1)`), `None` when empty.
fn quantile(v: &mut [f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let k = ((v.len() - 1) as f64 * q) as usize;
    Some(*v.select_nth_unstable_by(k, f64::total_cmp).1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_store::samples::LinkSample;

    /// `samples` per link of `links`, sorted by moment, as the evidence
    /// hands them over.
    fn by_link(samples: &[LinkSample], links: usize) -> Vec<Vec<(i64, i64)>> {
        let mut out = vec![Vec::new(); links];
        for s in samples {
            if let (Some(row), Some(w)) = (out.get_mut(s.link as usize), s.wire_ns) {
                row.push((s.at_ns, w));
            }
        }
        out.iter_mut()
            .for_each(|r: &mut Vec<(i64, i64)>| r.sort_unstable());
        out
    }

    /// Probes every 20 ms for 20 s over three links whose clocks are
    /// offset, each with a 2–13 ms stall of five probes here and there;
    /// link 1 is delayed 20 ms from 10 s on.
    fn samples() -> Vec<LinkSample> {
        let mut out = Vec::new();
        for i in 0..1000i64 {
            for link in 0..3u32 {
                let offset = [5_000_000, -3_000_000, 40_000][link as usize];
                let jitter = (i * 7919 + i64::from(link) * 104_729) % 30_000;
                let stall = match (i + 37 * i64::from(link)) % 150 < 5 {
                    true => 2_000_000 + (i % 12) * 1_000_000,
                    false => 0,
                };
                let fault = match link == 1 && i >= 500 {
                    true => 20_000_000,
                    false => 0,
                };
                out.push(LinkSample {
                    link,
                    at_ns: i * 20_000_000,
                    qdelay_ns: 0,
                    wire_ns: Some(50_000 + offset + jitter + stall + fault),
                });
            }
        }
        out
    }

    #[test]
    fn a_delaying_link_shows_from_when_it_delays_and_stalls_do_not() {
        let w = Wire::new(by_link(&samples(), 3));
        for t in (0..20).map(|s| s * 1_000_000_000 + 300_000_000) {
            let want = if t >= 10_000_000_000 { 20e6 } else { 0.0 };
            let got = w.at(1, t);
            assert!((got - want).abs() < 1e6, "link 1 at {t}: {got}");
            assert_eq!(w.at(0, t), 0.0, "link 0 at {t}");
            assert_eq!(w.at(2, t), 0.0, "link 2 at {t}");
        }
        // Delayed for half the run: 10 ms on average.
        assert!((w.mean(1) - 10e6).abs() < 0.5e6, "{}", w.mean(1));
        assert_eq!(w.mean(0), 0.0);
    }

    #[test]
    fn what_every_link_feels_at_once_is_no_links_doing() {
        // The whole machine slows every receive path by 5 ms from 10 s.
        let mut s = samples();
        for x in s.iter_mut().filter(|x| x.at_ns >= 10_000_000_000) {
            x.wire_ns = x.wire_ns.map(|w| w + 5_000_000);
        }
        let w = Wire::new(by_link(&s, 3));
        assert_eq!(w.at(0, 15_000_000_000), 0.0);
        assert_eq!(w.at(2, 15_000_000_000), 0.0);
        assert!((w.at(1, 15_000_000_000) - 20e6).abs() < 1e6);
        // A link no probe crossed added nothing.
        assert_eq!(Wire::new(by_link(&s, 4)).at(3, 0), 0.0);
    }

    #[test]
    fn a_probe_with_a_wild_send_time_costs_no_more_moments() {
        let mut s = samples();
        s.push(LinkSample {
            at_ns: i64::MAX,
            ..s[0]
        });
        s.push(LinkSample {
            at_ns: i64::MIN,
            ..s[0]
        });
        let w = Wire::new(by_link(&s, 3));
        assert!(w.excess.iter().all(|r| r.len() <= MAX_MOMENTS as usize + 1));
        assert_eq!(w.at(0, 15_000_000_000), 0.0);
    }
}
