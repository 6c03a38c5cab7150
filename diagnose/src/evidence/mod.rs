//! INT evidence at the moment an RPC crossed a link: the queueing-delay
//! samples of that link just before and after the moment, interpolated,
//! with an interval, flagged stale when the nearest probe is far, plus the
//! time the link itself held packets beyond its usual ([`wire`]).
//! Loss comes per path and bucket; a link's loss is the lowest of the paths
//! crossing it (a path that lost nothing clears all its links). Where the
//! switches' port counters say which links of a lossy path lost, only those
//! carry its loss ([`carriers`]).

mod carriers;
mod wire;

use crate::path::LinkIndex;
use carriers::carriers;
use intpath_store::counters::LinkCount;
use intpath_store::samples::{LinkSample, PathLoss, Run};
use wire::Wire;

/// Delay one link added around one moment, ns: its queue's, and the wire
/// time beyond its usual.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Estimate {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub samples: u32,
    pub stale: bool,
}

/// All evidence of one collector run, indexed by [`LinkIndex`] ids.
#[derive(Debug, Default)]
pub struct Evidence {
    /// Per link: sample times and queueing delays, sorted by time.
    times: Vec<Vec<i64>>,
    delays: Vec<Vec<i64>>,
    /// Per link: the run's median queueing delay (its quiet level).
    pub baseline: Vec<f64>,
    wire: Wire,
    /// Per link and bucket (`bucket - first_bucket`): probes sent and lost
    /// on the least lossy path crossing the link.
    loss: Vec<Vec<(u32, u32)>>,
    /// Per link: probe loss fraction over the whole run.
    run_loss: Vec<f64>,
    first_bucket: i64,
    bucket_ns: i64,
    /// Samples farther than this from the moment make an estimate stale.
    pub stale_ns: i64,
    /// Half-width of the window loss is counted over (losses are rare
    /// events: one bucket holds too few probes to see them).
    pub loss_window_ns: i64,
}

impl Evidence {
    /// Builds the index from what `intpath_store::samples` returned, and
    /// the port counters of the run's links (by run link id; empty when
    /// the run read none).
    pub fn new(
        index: &LinkIndex,
        run: &Run,
        samples: &[LinkSample],
        losses: &[PathLoss],
        counts: &[Option<LinkCount>],
    ) -> Self {
        let n = index.links.len();
        let map: Vec<Option<u32>> = run.links.iter().map(|l| index.id(l)).collect();
        let mut times = vec![Vec::new(); n];
        let mut delays = vec![Vec::new(); n];
        let mut wires = vec![Vec::new(); n];
        for s in samples {
            if let Some(Some(l)) = map.get(s.link as usize) {
                times[*l as usize].push(s.at_ns);
                delays[*l as usize].push(s.qdelay_ns);
                if let Some(w) = s.wire_ns {
                    wires[*l as usize].push((s.at_ns, w));
                }
            }
        }
        let baseline = delays
            .iter()
            .map(|d| {
                let mut v = d.clone();
                v.sort_unstable();
                v.get(v.len() / 2).map_or(0.0, |&x| x as f64)
            })
            .collect();
        let wire = Wire::new(wires);
        let first_bucket = losses.iter().map(|l| l.bucket).min().unwrap_or(0);
        let buckets = losses
            .iter()
            .map(|l| l.bucket - first_bucket + 1)
            .max()
            .unwrap_or(0) as usize;
        let mut loss = vec![vec![(0u32, u32::MAX); buckets]; n];
        let carried = carriers(run, losses, counts);
        for pl in losses {
            let Some((_, links)) = run.paths.iter().find(|(p, _)| *p == pl.path) else {
                continue;
            };
            let carries = |l: &u32| carried.get(&pl.path).is_none_or(|c| c.contains(l));
            let sent = (pl.probes.max(0) + pl.lost.max(0)) as u32;
            for l in links {
                // A link the counters cleared lost none of the path's probes.
                let lost = if carries(l) { pl.lost.max(0) as u32 } else { 0 };
                if let Some(Some(i)) = map.get(*l as usize) {
                    let cell = &mut loss[*i as usize][(pl.bucket - first_bucket) as usize];
                    // Compare lost/sent fractions without dividing.
                    if cell.1 == u32::MAX
                        || u64::from(lost) * u64::from(cell.0) < u64::from(cell.1) * u64::from(sent)
                    {
                        *cell = (sent, lost);
                    }
                }
            }
        }
        for row in &mut loss {
            row.iter_mut()
                .filter(|c| c.1 == u32::MAX)
                .for_each(|c| *c = (0, 0));
        }
        let run_loss = loss
            .iter()
            .map(|row| {
                let (sent, lost) = row.iter().fold((0u64, 0u64), |(s, l), c| {
                    (s + u64::from(c.0), l + u64::from(c.1))
                });
                if sent == 0 {
                    0.0
                } else {
                    lost as f64 / sent as f64
                }
            })
            .collect();
        Evidence {
            times,
            delays,
            baseline,
            wire,
            loss,
            run_loss,
            first_bucket,
            bucket_ns: run.bucket_ns.max(1),
            stale_ns: 100_000_000,
            loss_window_ns: 1_000_000_000,
        }
    }

    /// Delay on `link` at `at_ns`: its queueing delay, linear between the
    /// samples just before and just after it (a queue changes at most at
    /// line rate, so the straight line between two probes tracks it where
    /// an average over a window blurs every burst edge), with the two
    /// samples as the interval, the nearest sample alone at either end of
    /// the run; plus its wire time beyond the usual then. Stale when the
    /// nearest sample is farther than `stale_ns`.
    pub fn at(&self, link: u32, at_ns: i64) -> Option<Estimate> {
        let t = self.times.get(link as usize)?;
        let d = &self.delays[link as usize];
        let b = t.partition_point(|&x| x < at_ns);
        let (i, j) = match (b.checked_sub(1), t.get(b)) {
            (Some(a), Some(_)) => (a, b),
            (Some(a), None) => (a, a),
            (None, Some(_)) => (b, b),
            (None, None) => return None,
        };
        let wire = self.wire.at(link, at_ns);
        let (ti, tj, di, dj) = (t[i], t[j], d[i] as f64 + wire, d[j] as f64 + wire);
        let mean = if tj > ti {
            di + (dj - di) * (at_ns - ti) as f64 / (tj - ti) as f64
        } else {
            di
        };
        Some(Estimate {
            mean,
            lo: di.min(dj),
            hi: di.max(dj),
            samples: if i == j { 1 } else { 2 },
            stale: (at_ns - ti).abs().min((tj - at_ns).abs()) > self.stale_ns,
        })
    }

    /// Probe loss fraction on `link` within the loss window around `at_ns`.
    pub fn loss(&self, link: u32, at_ns: i64) -> f32 {
        let Some(row) = self.loss.get(link as usize) else {
            return 0.0;
        };
        let bucket = |t: i64| {
            (t.div_euclid(self.bucket_ns) - self.first_bucket).clamp(0, row.len() as i64) as usize
        };
        let (a, b) = (
            bucket(at_ns - self.loss_window_ns),
            bucket(at_ns + self.loss_window_ns + 1),
        );
        let (sent, lost) = row[a..b.max(a)].iter().fold((0u64, 0u64), |(s, l), c| {
            (s + u64::from(c.0), l + u64::from(c.1))
        });
        if sent == 0 {
            0.0
        } else {
            lost as f32 / sent as f32
        }
    }

    /// Mean queueing delay of every link over the whole run (the `hottest`
    /// baseline's view).
    pub fn mean_delay(&self, link: u32) -> f64 {
        let d = &self.delays[link as usize];
        if d.is_empty() {
            0.0
        } else {
            d.iter().sum::<i64>() as f64 / d.len() as f64
        }
    }

    /// The wire time `link` added beyond its usual, on average over the run
    /// (what a delaying link shows and its queue does not).
    pub fn mean_wire(&self, link: u32) -> f64 {
        self.wire.mean(link)
    }

    /// Probes sent and lost over the whole run on the least lossy path
    /// crossing `link`.
    pub fn loss_counts(&self, link: u32) -> (u64, u64) {
        self.loss.get(link as usize).map_or((0, 0), |row| {
            row.iter()
                .fold((0, 0), |(s, l), c| (s + u64::from(c.0), l + u64::from(c.1)))
        })
    }

    /// Probe loss fraction of `link` over the whole run.
    pub fn mean_loss(&self, link: u32) -> f64 {
        self.run_loss.get(link as usize).copied().unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_core::topo::TopologyBuilder;
    use intpath_store::StoreMode;

    /// A line of four switches, probed by one path s1 → s4 over three
    /// links that lost 60 of 1,000 probes in one bucket.
    fn line(counts: &[Option<LinkCount>]) -> (LinkIndex, Evidence) {
        let mut b = TopologyBuilder::new("line");
        for i in 1..=4 {
            b.switch(format!("s{i}"), i);
        }
        for i in 1..4 {
            b.link(format!("s{i}"), Some(2), format!("s{}", i + 1), Some(1));
        }
        let index = LinkIndex::new(&b.build().unwrap());
        let forward: Vec<_> = index
            .links
            .iter()
            .filter(|l| l.src < l.dst)
            .cloned()
            .collect();
        assert_eq!(forward.len(), 3, "{forward:?}");
        let run = Run {
            id: 1,
            bucket_ns: 1_000_000_000,
            store: StoreMode::Raw,
            span_ns: Some((0, 1_000_000_000)),
            paths: vec![(0, vec![0, 1, 2])],
            links: forward,
            topology: None,
        };
        let losses = [PathLoss {
            path: 0,
            bucket: 0,
            probes: 940,
            lost: 60,
        }];
        let ev = Evidence::new(&index, &run, &[], &losses, counts);
        (index, ev)
    }

    fn run_loss(counts: &[Option<LinkCount>]) -> Vec<f64> {
        let (index, ev) = line(counts);
        (0..index.links.len() as u32)
            .map(|l| ev.mean_loss(l))
            .filter(|&x| x > 0.0)
            .collect()
    }

    const fn count(sent: u64, lost: u64) -> Option<LinkCount> {
        Some(LinkCount { sent, lost })
    }

    #[test]
    fn without_counters_every_link_of_a_lossy_path_carries_its_loss() {
        assert_eq!(run_loss(&[]), vec![0.06; 3]);
    }

    #[test]
    fn counters_put_a_paths_loss_on_the_link_that_dropped() {
        // The middle link lost 5 % of what it sent; the others differ by
        // the moment their ends were read.
        let (index, ev) = line(&[count(50_000, 3), count(50_000, 2_500), count(50_000, 0)]);
        let lossy: Vec<String> = (0..index.links.len() as u32)
            .filter(|&l| ev.mean_loss(l) > 0.0)
            .map(|l| index.name(l))
            .collect();
        assert_eq!(lossy, vec!["s2:2->s3".to_owned()]);
        // The cleared links still count the path's probes, none lost.
        let first = index
            .links
            .iter()
            .position(|l| l.src == "s1" && l.dst == "s2");
        assert_eq!(ev.loss_counts(first.unwrap() as u32), (1_000, 0));
    }

    #[test]
    fn counters_that_saw_no_loss_leave_a_full_queues_tail_drops_on_the_path() {
        // Tail drops happen before the egress counter: no counter lost
        // anything near the path's 6 %.
        let counts = [count(50_000, 3), count(50_000, 10), count(50_000, 0)];
        assert_eq!(run_loss(&counts), vec![0.06; 3]);
    }
}
