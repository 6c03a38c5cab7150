//! The rows one store write takes: a batch of raw probe rows, per-link and
//! per-path bucket aggregates and running path totals, and which raw rows a
//! run keeps. The collector's aggregator fills them; [`crate::Store::write`]
//! stores them.

use intpath_core::wire::IntRecordRepr;
use rustc_hash::FxHashMap as HashMap;
use std::num::NonZeroU32;

/// Which raw probe rows a run keeps. Every mode stores the per-link and
/// per-path time buckets (what queries, heatmaps and `watch` read); raw rows,
/// one per probe with its hop records, are what a diagnosis places in time
/// and what dominates the database's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StoreMode {
    /// Every probe with its hop records.
    #[default]
    Raw,
    /// Buckets only.
    Buckets,
    /// Probes 0, N, 2N, ... of each path in arrival order (so a path that
    /// delivered `n` probes keeps ⌈n/N⌉, and no path goes unsampled however
    /// paths interleave), plus all buckets.
    Sampled(NonZeroU32),
}

impl StoreMode {
    /// Whether the `arrival`-th probe (from 0) of its path keeps its raw row.
    pub fn keeps(self, arrival: u64) -> bool {
        match self {
            StoreMode::Raw => true,
            StoreMode::Buckets => false,
            StoreMode::Sampled(n) => arrival.is_multiple_of(u64::from(n.get())),
        }
    }
}

impl std::fmt::Display for StoreMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreMode::Raw => f.write_str("raw"),
            StoreMode::Buckets => f.write_str("buckets"),
            StoreMode::Sampled(n) => write!(f, "sampled:{n}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("store mode {0:?}: give raw, buckets or sampled:N with N ≥ 2")]
pub struct BadStoreMode(String);

impl std::str::FromStr for StoreMode {
    type Err = BadStoreMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadStoreMode(s.to_owned());
        match s {
            "raw" => Ok(StoreMode::Raw),
            "buckets" => Ok(StoreMode::Buckets),
            _ => {
                let n: u32 = s
                    .strip_prefix("sampled:")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(bad)?;
                match NonZeroU32::new(n) {
                    Some(n) if n.get() >= 2 => Ok(StoreMode::Sampled(n)),
                    _ => Err(bad()),
                }
            }
        }
    }
}

/// One probe row with its hop records. Its id comes from the database when
/// stored (SQLite's rowid, PostgreSQL's identity sequence), so any number of
/// collectors can write into one database.
#[derive(Debug, Clone)]
pub struct ProbeRow {
    pub path_id: u16,
    pub sequence: u32,
    pub send_ns: i64,
    pub recv_ns: i64,
    pub hops: u8,
    /// The first hop's ingress time (switch clock, µs): the origin of the
    /// times in `records`.
    pub ts0_us: i64,
    /// The hop records in hop order (0 = the first switch visited), as the
    /// store's `probes.records` JSON array (see migration 0002).
    pub records: String,
}

/// A probe's hop records as `probes.records` holds them (a JSON array the
/// `hops` view of migration 0002 unfolds): the layout is written here, next
/// to the migrations that read it, and nowhere else.
#[derive(Debug)]
pub struct HopRecords {
    json: String,
    ts0_us: i64,
}

impl HopRecords {
    /// Records of `hops` hops whose times count from `ts0_us`, the first
    /// hop's ingress time (switch clock, µs).
    pub fn new(hops: usize, ts0_us: i64) -> Self {
        let mut json = String::with_capacity(2 + hops * 32);
        json.push('[');
        Self { json, ts0_us }
    }

    /// Appends the next hop's record, measured on `link` (if known).
    pub fn push(&mut self, rec: &IntRecordRepr, link: Option<u32>) {
        if self.json.len() > 1 {
            self.json.push(',');
        }
        push_record(&mut self.json, rec, link, self.ts0_us);
    }

    /// The finished array.
    pub fn finish(mut self) -> String {
        self.json.push(']');
        self.json
    }
}

/// Appends one hop record as `[switch_id, ingress_port, egress_port, link_id,
/// ingress_ts_us - ts0_us, egress_ts_us - ingress_ts_us, qdepth, qdelay_us]`.
fn push_record(out: &mut String, rec: &IntRecordRepr, link: Option<u32>, ts0_us: i64) {
    let mut num = itoa::Buffer::new();
    out.push('[');
    for (i, v) in [
        Some(i64::from(rec.switch_id)),
        Some(i64::from(rec.ingress_port)),
        Some(i64::from(rec.egress_port)),
        link.map(i64::from),
        // Switch clocks as SQLite integers, as in the 0001 layout.
        Some((rec.ingress_ts as i64).wrapping_sub(ts0_us)),
        Some((rec.egress_ts as i64).wrapping_sub(rec.ingress_ts as i64)),
        Some(i64::from(rec.enq_qdepth)),
        Some(i64::from(rec.deq_timedelta)),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            out.push(',');
        }
        match v {
            Some(v) => out.push_str(num.format(v)),
            None => out.push_str("null"),
        }
    }
    out.push(']');
}

/// Queue statistics of one directed link in one time bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkAgg {
    pub samples: u64,
    pub qdepth_min: u32,
    pub qdepth_sum: u64,
    pub qdepth_max: u32,
    pub qdelay_min: u32,
    pub qdelay_sum: u64,
    pub qdelay_max: u32,
}

impl LinkAgg {
    /// The aggregate of one record.
    pub fn new(r: &IntRecordRepr) -> Self {
        LinkAgg {
            samples: 1,
            qdepth_min: r.enq_qdepth,
            qdepth_sum: u64::from(r.enq_qdepth),
            qdepth_max: r.enq_qdepth,
            qdelay_min: r.deq_timedelta,
            qdelay_sum: u64::from(r.deq_timedelta),
            qdelay_max: r.deq_timedelta,
        }
    }

    /// Folds in another aggregate of the same link and bucket, as the
    /// store's upsert does.
    pub fn merge(&mut self, o: &LinkAgg) {
        self.samples += o.samples;
        self.qdepth_min = self.qdepth_min.min(o.qdepth_min);
        self.qdepth_sum += o.qdepth_sum;
        self.qdepth_max = self.qdepth_max.max(o.qdepth_max);
        self.qdelay_min = self.qdelay_min.min(o.qdelay_min);
        self.qdelay_sum += o.qdelay_sum;
        self.qdelay_max = self.qdelay_max.max(o.qdelay_max);
    }

    /// Folds in one more record of the same link and bucket.
    pub fn add(&mut self, r: &IntRecordRepr) {
        self.samples += 1;
        self.qdepth_min = self.qdepth_min.min(r.enq_qdepth);
        self.qdepth_sum += u64::from(r.enq_qdepth);
        self.qdepth_max = self.qdepth_max.max(r.enq_qdepth);
        self.qdelay_min = self.qdelay_min.min(r.deq_timedelta);
        self.qdelay_sum += u64::from(r.deq_timedelta);
        self.qdelay_max = self.qdelay_max.max(r.deq_timedelta);
    }
}

/// Arrivals of one path in one time bucket. `lost` goes negative when late
/// probes fill gaps opened in an earlier bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathAgg {
    pub probes: u64,
    pub lost: i64,
    pub duplicates: u64,
    pub reordered: u64,
    pub e2e_sum_ns: i64,
    pub e2e_max_ns: i64,
}

/// Running totals of one path's sequence numbers (the collector's sequence
/// tracker keeps them; `path_stats` stores them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SeqStats {
    pub first_seq: u32,
    pub last_seq: u32,
    /// Distinct probes received.
    pub received: u64,
    pub duplicates: u64,
    pub reordered: u64,
    /// Numbers between first and last never received.
    pub lost: u64,
    pub restarts: u64,
}

/// Everything one store transaction writes.
#[derive(Debug, Default)]
pub struct Batch {
    /// The raw rows the run's [`StoreMode`] keeps.
    pub probes: Vec<ProbeRow>,
    /// Hop records in `probes`.
    pub hops: usize,
    /// Probes and hop records folded into the buckets (all that arrived).
    pub received: usize,
    pub received_hops: usize,
    pub links: HashMap<(u32, i64), LinkAgg>,
    pub paths: HashMap<(u16, i64), PathAgg>,
    /// Running totals of the paths this batch touched.
    pub path_stats: HashMap<u16, SeqStats>,
    /// Earliest send time in the batch.
    pub first_ns: Option<i64>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.received == 0
    }

    /// Folds a later batch into this one, as storing both would.
    pub fn absorb(&mut self, later: Batch) {
        self.probes.extend(later.probes);
        self.hops += later.hops;
        self.received += later.received;
        self.received_hops += later.received_hops;
        for (k, a) in later.links {
            self.links.entry(k).and_modify(|b| b.merge(&a)).or_insert(a);
        }
        for (k, a) in later.paths {
            self.paths
                .entry(k)
                .and_modify(|b| {
                    b.probes += a.probes;
                    b.lost += a.lost;
                    b.duplicates += a.duplicates;
                    b.reordered += a.reordered;
                    b.e2e_sum_ns = b.e2e_sum_ns.saturating_add(a.e2e_sum_ns);
                    b.e2e_max_ns = b.e2e_max_ns.max(a.e2e_max_ns);
                })
                .or_insert(a);
        }
        // Running totals: the later ones are the newer.
        self.path_stats.extend(later.path_stats);
        self.first_ns = match (self.first_ns, later.first_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::StoreMode;

    #[test]
    fn store_modes_parse_and_print_back() {
        for s in ["raw", "buckets", "sampled:2", "sampled:1000"] {
            assert_eq!(s.parse::<StoreMode>().unwrap().to_string(), s);
        }
        for bad in [
            "",
            "Raw",
            "sampled",
            "sampled:",
            "sampled:0",
            "sampled:1",
            "sampled:x",
        ] {
            let e = bad.parse::<StoreMode>().unwrap_err().to_string();
            assert!(e.contains("sampled:N with N ≥ 2"), "{bad}: {e}");
        }
    }
}
