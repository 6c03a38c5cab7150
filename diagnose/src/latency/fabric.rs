//! Server time: a connection's response latency minus the queueing INT
//! measured on both directions of its host pair's paths in that epoch.
//!
//! Everything comes from the pieces `intpath diagnose` itself uses: the
//! store's sample reader (`intpath_store::samples`), hosts by
//! `--host-map` or address ([`crate::hosts`]), the routes deploy installs
//! ([`crate::path`]) and the per-link interpolation ([`crate::evidence`]).
//! Only queueing is subtracted: propagation and serialisation, which INT
//! records do not carry, stay in the server time.

use super::flows::Row;
use super::LatencyError;
use crate::evidence::Evidence;
use crate::hosts::Hosts;
use crate::path::{LinkIndex, Resolver};
use intpath_core::topo::Topology;
use intpath_store::samples;
use intpath_store::{Db, Store};
use std::collections::HashMap;
use std::time::Duration;

/// Moments per epoch the interpolated queueing is averaged over: the
/// epoch's estimate is a mean over the whole epoch, so its queueing is too.
const POINTS: i64 = 16;

/// Where the INT evidence is.
pub struct FabricSource<'a> {
    pub db: Db,
    pub topo: &'a Topology,
    /// IP, host name or service name → topology host (`--host-map`).
    pub host_map: HashMap<String, String>,
}

/// Per row: the mean queueing (ns) on the forward and reverse paths between
/// the row's client and server hosts during its epoch, from the collector
/// run overlapping the capture most. `None` for a row whose hosts are not
/// in the topology, which has no route, or whose links INT never sampled.
pub async fn queueing(
    src: &FabricSource<'_>,
    rows: &[Row],
    epoch: Duration,
) -> Result<Vec<Option<f64>>, LatencyError> {
    let epoch_ns = i64::try_from(epoch.as_nanos()).unwrap_or(i64::MAX).max(1);
    let mut hosts = Hosts::of_topology(src.topo, &src.host_map)?;
    let (lo, hi) = rows.iter().fold((i64::MAX, i64::MIN), |(lo, hi), r| {
        (
            lo.min(r.epoch_start_ns),
            hi.max(r.epoch_start_ns.saturating_add(epoch_ns)),
        )
    });
    let store = Store::open_existing(src.db.clone()).await?;
    let runs = samples::runs(&store).await?;
    let Some(run) = samples::overlapping_most(runs, lo, hi) else {
        store.close().await;
        return Err(LatencyError::NoRun(src.db.to_string()));
    };
    let (a, b) = run.span_ns.unwrap_or_default();
    let hops = samples::link_samples(&store, run.id, a, b).await;
    store.close().await;
    let hops = hops?;
    let index = LinkIndex::new(src.topo);
    // Loss is not subtracted from a latency, so none is read.
    let ev = Evidence::new(&index, &run, &hops, &[], &[]);
    let mut paths = Resolver::new(src.topo);
    Ok(rows
        .iter()
        .map(|r| {
            let a = hosts.place_ip(r.client.ip())?;
            let b = hosts.place_ip(r.server.ip())?;
            let path = paths.path(&index, a, b).ok()?;
            let mut seen = false;
            let total: f64 = path
                .all()
                .map(|l| {
                    let at: Vec<f64> = (0..POINTS)
                        .filter_map(|k| {
                            let t = r.epoch_start_ns + (2 * k + 1) * epoch_ns / (2 * POINTS);
                            ev.at(l, t).map(|e| e.mean)
                        })
                        .collect();
                    seen |= !at.is_empty();
                    at.iter().sum::<f64>() / at.len().max(1) as f64
                })
                .sum();
            seen.then_some(total)
        })
        .collect())
}
