//! `/metrics`: what the collector has stored, in the OpenMetrics text format
//! Prometheus scrapes (`collect --metrics-listen`).
//!
//! The writer hands every batch it stored to [`Metrics::stored`]; a scrape
//! encodes that state, so what Prometheus sees is what the database holds:
//! the link gauges are the newest time bucket of each link exactly as
//! `link_buckets` has it. Series are a fixed set per run: at most 7 per
//! directed link probes cross (loss only for links on a plan path), 4 per
//! plan path, one per reject reason and 5 of the collector's own, so a
//! fabric's cardinality is bounded by its size, never by traffic.

mod http;

pub use http::{MetricsServer, ServeError};

use crate::parse::{Reject, RejectCounts};
use intpath_core::plan::Plan;
use intpath_store::rows::{Batch, LinkAgg, SeqStats};
use intpath_store::{LinkMap, RunId};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The labels of a directed link: as the store's `links` table names it
/// (`src`, `src_port`, `dst`), with the link as `query link` spells it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct LinkLabels {
    link: String,
    sender: String,
    port: String,
    receiver: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PathLabels {
    path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

/// One link's newest bucket and its running sample count.
#[derive(Debug, Clone, Copy)]
struct LinkNow {
    bucket: i64,
    agg: LinkAgg,
    samples_total: u64,
}

/// What the collector has stored in its current run.
#[derive(Debug, Default)]
struct State {
    run: RunId,
    bucket_ns: i64,
    labels: Vec<LinkLabels>,
    /// Link ids each path crosses.
    path_links: Vec<(u16, Vec<u32>)>,
    links: BTreeMap<u32, LinkNow>,
    paths: BTreeMap<u16, SeqStats>,
    stored_probes: u64,
    raw_probes: u64,
    lost_probes: u64,
    socket_drops: u64,
    rejects: Option<Arc<RejectCounts>>,
}

impl State {
    /// Lowest loss ratio of the paths crossing `link` over the run: a path
    /// that lost nothing clears every link it crossed (as `query`'s loss).
    fn link_loss(&self, link: u32) -> Option<f64> {
        self.path_links
            .iter()
            .filter(|(_, ls)| ls.contains(&link))
            .filter_map(|(p, _)| self.paths.get(p))
            .filter(|s| s.received + s.lost > 0)
            .map(|s| s.lost as f64 / (s.received + s.lost) as f64)
            .min_by(f64::total_cmp)
    }
}

/// The shared state behind `/metrics`; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Metrics(Arc<Mutex<State>>);

impl Metrics {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts over for a new run on `plan`.
    pub fn begin_run(
        &self,
        run: RunId,
        links: &LinkMap,
        plan: &Plan,
        bucket_ns: u64,
        rejects: Arc<RejectCounts>,
    ) {
        let labels = links
            .links()
            .iter()
            .map(|l| LinkLabels {
                link: l.to_string(),
                sender: l.src.clone(),
                port: l.src_port.to_string(),
                receiver: l.dst.clone(),
            })
            .collect();
        let path_links = plan
            .paths
            .iter()
            .map(|p| {
                let hops = p.nodes.iter().zip(&p.egress_ports);
                let ls = hops.filter_map(|(n, port)| links.egress_link(n, *port));
                (p.id, ls.collect())
            })
            .collect();
        *self.state() = State {
            run,
            bucket_ns: bucket_ns as i64,
            labels,
            path_links,
            rejects: Some(rejects),
            ..State::default()
        };
    }

    /// Counts a batch the store could not take and that is given up.
    pub fn lost(&self, batch: &Batch) {
        self.state().lost_probes += batch.received as u64;
    }

    /// The kernel's drops at the UDP sockets so far.
    pub fn socket_drops(&self, total: u64) {
        self.state().socket_drops = total;
    }

    /// Folds in a batch the store has committed.
    pub fn stored(&self, batch: &Batch) {
        let mut s = self.state();
        s.stored_probes += batch.received as u64;
        s.raw_probes += batch.probes.len() as u64;
        for (&(link, bucket), a) in &batch.links {
            use std::collections::btree_map::Entry;
            match s.links.entry(link) {
                Entry::Vacant(e) => {
                    e.insert(LinkNow {
                        bucket,
                        agg: *a,
                        samples_total: a.samples,
                    });
                }
                Entry::Occupied(mut e) => {
                    let now = e.get_mut();
                    now.samples_total += a.samples;
                    // Every part of the newest bucket arrives once it is
                    // the newest, so this is the row the store holds.
                    if bucket > now.bucket {
                        (now.bucket, now.agg) = (bucket, *a);
                    } else if bucket == now.bucket {
                        now.agg.merge(a);
                    }
                }
            }
        }
        for (&path, stats) in &batch.path_stats {
            s.paths.insert(path, *stats);
        }
    }

    /// The exposition text of one scrape.
    pub fn encode(&self) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(self.clone()));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }
}

/// One metric family: `series` as (labels, value) under `name`.
fn family<L: EncodeLabelSet, M: EncodeMetric>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (L, M)>,
    metric_type: prometheus_client::metrics::MetricType,
) -> std::fmt::Result {
    let mut f = enc.encode_descriptor(name, help, None, metric_type)?;
    for (labels, m) in series {
        m.encode(f.encode_family(&labels)?)?;
    }
    Ok(())
}

impl Collector for Metrics {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        use prometheus_client::metrics::MetricType::{Counter, Gauge};
        let s = self.state();
        let link = |id: &u32| s.labels.get(*id as usize).cloned();
        let gauges = |f: &dyn Fn(&LinkNow) -> f64| {
            s.links
                .iter()
                .filter_map(|(id, now)| Some((link(id)?, ConstGauge::new(f(now)))))
                .collect::<Vec<_>>()
        };
        let mean = |sum: u64, n: u64| sum as f64 / n.max(1) as f64;
        for (name, help, value) in [
            (
                "intpath_link_queue_depth_mean_packets",
                "Mean egress queue depth met by probes on the link in its newest time bucket.",
                &(|n: &LinkNow| mean(n.agg.qdepth_sum, n.agg.samples)) as &dyn Fn(&LinkNow) -> f64,
            ),
            (
                "intpath_link_queue_depth_max_packets",
                "Largest egress queue depth met by a probe on the link in its newest time bucket.",
                &|n: &LinkNow| f64::from(n.agg.qdepth_max),
            ),
            (
                "intpath_link_queueing_delay_mean_seconds",
                "Mean time probes waited in the link's egress queue in its newest time bucket.",
                &|n: &LinkNow| mean(n.agg.qdelay_sum, n.agg.samples) / 1e6,
            ),
            (
                "intpath_link_queueing_delay_max_seconds",
                "Longest a probe waited in the link's egress queue in its newest time bucket.",
                &|n: &LinkNow| f64::from(n.agg.qdelay_max) / 1e6,
            ),
            (
                "intpath_link_bucket_start_seconds",
                "Start of the link's newest time bucket (probe send clock, Unix seconds).",
                &|n: &LinkNow| (n.bucket as f64 * s.bucket_ns as f64) / 1e9,
            ),
        ] {
            family(&mut enc, name, help, gauges(value), Gauge)?;
        }
        let loss = s
            .links
            .keys()
            .filter_map(|id| Some((link(id)?, ConstGauge::new(s.link_loss(*id)?))));
        family(
            &mut enc,
            "intpath_link_loss_ratio",
            "Lowest loss ratio over the run of the plan paths crossing the link.",
            loss.collect::<Vec<_>>(),
            Gauge,
        )?;
        let samples = s
            .links
            .iter()
            .filter_map(|(id, n)| Some((link(id)?, ConstCounter::new(n.samples_total))));
        family(
            &mut enc,
            "intpath_link_samples",
            "Hop records stored for the link in this run.",
            samples.collect::<Vec<_>>(),
            Counter,
        )?;
        let path = |p: &u16| PathLabels {
            path: p.to_string(),
        };
        for (name, help, value) in [
            (
                "intpath_path_probes",
                "Distinct probes of the path stored in this run.",
                (|st: &SeqStats| st.received) as fn(&SeqStats) -> u64,
            ),
            (
                "intpath_path_duplicate_probes",
                "Probes of the path that arrived more than once.",
                |st: &SeqStats| st.duplicates,
            ),
            (
                "intpath_path_reordered_probes",
                "Probes of the path that arrived after a later one.",
                |st: &SeqStats| st.reordered,
            ),
        ] {
            let series = s
                .paths
                .iter()
                .map(|(p, st)| (path(p), ConstCounter::new(value(st))));
            family(&mut enc, name, help, series.collect::<Vec<_>>(), Counter)?;
        }
        let lost = s
            .paths
            .iter()
            .map(|(p, st)| (path(p), ConstGauge::new(st.lost as i64)));
        family(
            &mut enc,
            "intpath_path_lost_probes",
            "Sequence numbers of the path not received so far (falls when late probes fill gaps).",
            lost.collect::<Vec<_>>(),
            Gauge,
        )?;
        let rejects = Reject::ALL.iter().map(|&r| {
            let n = s.rejects.as_ref().map_or(0, |c| c.get(r));
            (ReasonLabels { reason: r.name() }, ConstCounter::new(n))
        });
        family(
            &mut enc,
            "intpath_collector_rejected_probes",
            "Probes the collector did not store, by reason.",
            rejects.collect::<Vec<_>>(),
            Counter,
        )?;
        let own: [(&str, &str, u64); 4] = [
            (
                "intpath_collector_stored_probes",
                "Probes stored in this run's buckets.",
                s.stored_probes,
            ),
            (
                "intpath_collector_raw_probes",
                "Probes stored with their hop records (all of them with --store raw).",
                s.raw_probes,
            ),
            (
                "intpath_collector_lost_probes",
                "Valid probes given up because the store failed (a full disk, a server away).",
                s.lost_probes,
            ),
            (
                "intpath_collector_socket_dropped_probes",
                "Datagrams the kernel dropped at the collector's UDP socket (receive buffer full): \
                 delivered by the network, so not path loss.",
                s.socket_drops,
            ),
        ];
        for (name, help, n) in own {
            let c = ConstCounter::new(n);
            c.encode(enc.encode_descriptor(name, help, None, Counter)?)?;
        }
        let run = ConstGauge::new(s.run);
        run.encode(enc.encode_descriptor(
            "intpath_collector_run",
            "Id of the run the collector is storing into.",
            None,
            Gauge,
        )?)
    }
}

#[cfg(test)]
mod tests;
