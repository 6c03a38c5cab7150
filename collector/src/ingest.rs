//! Turns validated probes into the rows and aggregates one store write holds.
//!
//! Aggregating here, in memory, rather than in SQL is what makes the store
//! fast: a batch of thousands of probes becomes a few hundred bucket upserts.

use crate::links::LinkMap;
use crate::parse::Probe;
use crate::sequence::{Arrival, SeqStats, SeqTracker};
use intpath_core::wire::IntRecordRepr;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

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
    fn new(r: &IntRecordRepr) -> Self {
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

    fn add(&mut self, r: &IntRecordRepr) {
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

/// Everything one store transaction writes.
#[derive(Debug, Default)]
pub struct Batch {
    pub probes: Vec<ProbeRow>,
    /// Hop records in `probes`.
    pub hops: usize,
    pub links: HashMap<(u32, i64), LinkAgg>,
    pub paths: HashMap<(u16, i64), PathAgg>,
    /// Running totals of the paths this batch touched.
    pub path_stats: HashMap<u16, SeqStats>,
    /// Earliest send time in the batch.
    pub first_ns: Option<i64>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.probes.is_empty()
    }
}

/// Folds probes into batches.
#[derive(Debug)]
pub struct Aggregator {
    links: Arc<LinkMap>,
    bucket_ns: u64,
    seq: HashMap<u16, SeqTracker>,
    batch: Batch,
}

impl Aggregator {
    pub fn new(links: Arc<LinkMap>, bucket_ns: u64) -> Self {
        Self {
            links,
            bucket_ns: bucket_ns.max(1),
            seq: HashMap::default(),
            batch: Batch::default(),
        }
    }

    pub fn bucket_of(&self, ns: i64) -> i64 {
        ns.div_euclid(self.bucket_ns as i64)
    }

    pub fn add(&mut self, p: Probe) {
        let send_ns = p.send_ns as i64;
        let recv_ns = p.recv_ns as i64;
        let bucket = self.bucket_of(send_ns);
        let b = &mut self.batch;
        b.first_ns = Some(b.first_ns.map_or(send_ns, |f| f.min(send_ns)));

        let tracker = self.seq.entry(p.path_id).or_default();
        let arrival = tracker.observe(p.sequence);
        b.path_stats.insert(p.path_id, tracker.stats());
        let e2e = recv_ns.wrapping_sub(send_ns);
        let pa = b.paths.entry((p.path_id, bucket)).or_default();
        pa.probes += 1;
        pa.e2e_sum_ns = pa.e2e_sum_ns.saturating_add(e2e);
        pa.e2e_max_ns = pa.e2e_max_ns.max(e2e);
        match arrival {
            Arrival::InOrder { gap } => pa.lost += i64::from(gap),
            Arrival::Late => {
                pa.reordered += 1;
                pa.lost -= 1;
            }
            Arrival::Duplicate => pa.duplicates += 1,
            Arrival::TooOld => {}
        }

        let n = p.records.len();
        let ts0_us = p.records.last().map_or(0, |r| r.ingress_ts as i64);
        let mut records = String::with_capacity(2 + n * 32);
        records.push('[');
        // The stack holds the last switch first.
        for (i, rec) in p.records.iter().rev().enumerate() {
            let link = self.links.record_link(rec.switch_id, rec.egress_port);
            if let Some(l) = link {
                b.links
                    .entry((l, bucket))
                    .and_modify(|a| a.add(rec))
                    .or_insert_with(|| LinkAgg::new(rec));
            }
            if i > 0 {
                records.push(',');
            }
            push_record(&mut records, rec, link, ts0_us);
        }
        records.push(']');
        b.hops += n;
        b.probes.push(ProbeRow {
            path_id: p.path_id,
            sequence: p.sequence,
            send_ns,
            recv_ns,
            hops: n as u8,
            ts0_us,
            records,
        });
    }

    pub fn pending_hops(&self) -> usize {
        self.batch.hops
    }

    pub fn take(&mut self) -> Batch {
        std::mem::take(&mut self.batch)
    }
}
