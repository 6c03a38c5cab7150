//! Turns validated probes into the rows and aggregates one store write holds.
//!
//! Aggregating here, in memory, rather than in SQL is what makes the store
//! fast: a batch of thousands of probes becomes a few hundred bucket upserts.

use crate::parse::Probe;
use crate::sequence::{Arrival, SeqTracker};
use intpath_store::rows::{Batch, HopRecords, LinkAgg, ProbeRow, StoreMode};
use intpath_store::LinkMap;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Folds probes into batches.
#[derive(Debug)]
pub struct Aggregator {
    links: Arc<LinkMap>,
    bucket_ns: u64,
    mode: StoreMode,
    paths: HashMap<u16, PathState>,
    batch: Batch,
}

/// What the aggregator remembers of one path between batches.
#[derive(Debug, Default)]
struct PathState {
    seq: SeqTracker,
    /// Probes that arrived so far (the sampling clock of [`StoreMode`]).
    arrivals: u64,
}

impl Aggregator {
    /// Keeps every raw probe row until told otherwise
    /// ([`Aggregator::storing`]).
    pub fn new(links: Arc<LinkMap>, bucket_ns: u64) -> Self {
        Self {
            links,
            bucket_ns: bucket_ns.max(1),
            mode: StoreMode::Raw,
            paths: HashMap::default(),
            batch: Batch::default(),
        }
    }

    /// Keeps only the raw rows `mode` asks for; buckets are always complete.
    pub fn storing(mut self, mode: StoreMode) -> Self {
        self.mode = mode;
        self
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

        let path = self.paths.entry(p.path_id).or_default();
        let arrival = path.seq.observe(p.sequence);
        b.path_stats.insert(p.path_id, path.seq.stats());
        let keep = self.mode.keeps(path.arrivals);
        path.arrivals += 1;
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
        b.received += 1;
        b.received_hops += n;
        let ts0_us = p.records.last().map_or(0, |r| r.ingress_ts as i64);
        let mut records = keep.then(|| HopRecords::new(n, ts0_us));
        // The stack holds the last switch first.
        for rec in p.records.iter().rev() {
            let link = self.links.record_link(rec.switch_id, rec.egress_port);
            if let Some(l) = link {
                b.links
                    .entry((l, bucket))
                    .and_modify(|a| a.add(rec))
                    .or_insert_with(|| LinkAgg::new(rec));
            }
            if let Some(r) = records.as_mut() {
                r.push(rec, link);
            }
        }
        let Some(records) = records else {
            return;
        };
        b.hops += n;
        b.probes.push(ProbeRow {
            path_id: p.path_id,
            sequence: p.sequence,
            send_ns,
            recv_ns,
            hops: n as u8,
            ts0_us,
            records: records.finish(),
        });
    }

    /// Hop records folded in since the last [`Aggregator::take`].
    pub fn pending_hops(&self) -> usize {
        self.batch.received_hops
    }

    pub fn take(&mut self) -> Batch {
        std::mem::take(&mut self.batch)
    }
}
