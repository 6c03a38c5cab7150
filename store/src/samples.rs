//! The store read back as evidence for trace diagnosis: every queueing-delay
//! sample of every link with the moment the probe crossed it, and per-path
//! loss per bucket.
//!
//! Switch clocks are not comparable with host clocks, so a hop's moment is
//! rebuilt from the probe's send time (generator clock, ns since the epoch)
//! plus the time the probe spent in the switches before it (differences of
//! one switch's own timestamps, so clock offsets between switches cancel).
//! Everything here reads; the write path is untouched.

use crate::rows::StoreMode;
use crate::{on_pool, RunId, Store, StoreError};
use intpath_core::link::DirLink;
use sqlx::Row;

/// One collector run as a diagnosis needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub id: RunId,
    pub bucket_ns: i64,
    /// Which raw rows the run kept.
    pub store: StoreMode,
    /// Earliest and latest probe send times (of a run that kept only some
    /// raw rows: its first probe and the end of its last bucket); `None`
    /// for a run without probes.
    pub span_ns: Option<(i64, i64)>,
    /// `links[id]`: the directed link the store numbers `id`.
    pub links: Vec<DirLink>,
    /// Link ids each plan path crosses, in order.
    pub paths: Vec<(u16, Vec<u32>)>,
    /// The topology the run measured, in `intpath_core`'s JSON (`None` for
    /// a run recorded before runs kept it).
    pub topology: Option<String>,
}

/// A queueing-delay sample: link `link` held the probe `qdelay_ns` at `at_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSample {
    pub link: u32,
    pub at_ns: i64,
    pub qdelay_ns: i64,
    /// The next switch's ingress stamp less this one's egress stamp: the
    /// wire and whatever held the probe between the two switches' stamps
    /// (a delaying link, a receive queue the program does not see), plus
    /// the offset between the two clocks. `None` on a path's last link.
    pub wire_ns: Option<i64>,
}

/// Probes that arrived and were lost on one path in one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathLoss {
    pub path: u16,
    pub bucket: i64,
    pub probes: i64,
    pub lost: i64,
}

/// Of `runs`, the one with probes whose span overlaps `[lo, hi]` (ns) most:
/// the telemetry that goes with traces or a capture of that time. `None`
/// when no run with probes shares a moment with `[lo, hi]`: the INT of
/// another time says nothing about it.
pub fn overlapping_most(runs: Vec<Run>, lo: i64, hi: i64) -> Option<Run> {
    let shared = |r: &Run| {
        r.span_ns
            .map(|(a, b)| b.min(hi).saturating_sub(a.max(lo)))
            .filter(|&d| d >= 0)
    };
    runs.into_iter()
        .filter_map(|r| Some((shared(&r)?, r)))
        .max_by_key(|(d, _)| *d)
        .map(|(_, r)| r)
}

/// Every run in the store, oldest first.
pub async fn runs(store: &Store) -> Result<Vec<Run>, StoreError> {
    on_pool!(store, pool => {
        let rows = sqlx::query(
            "SELECT r.id, r.bucket_ns, MIN(p.send_ns), MAX(p.send_ns), r.first_ns, \
             (SELECT MAX(bucket) FROM path_buckets WHERE run_id = r.id) \
             FROM runs r LEFT JOIN probes p ON p.run_id = r.id GROUP BY r.id ORDER BY r.id",
        )
        .fetch_all(pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let id: RunId = r.try_get(0)?;
            let bucket_ns: i64 = r.try_get(1)?;
            let mode = store.store_mode(id).await?;
            // Without every raw row, the run's span comes from its buckets.
            let span_ns = if mode == StoreMode::Raw {
                r.try_get::<Option<i64>, _>(2)?
                    .zip(r.try_get::<Option<i64>, _>(3)?)
            } else {
                let last_bucket: Option<i64> = r.try_get(5)?;
                r.try_get::<Option<i64>, _>(4)?.zip(
                    last_bucket.map(|b| b.saturating_add(1).saturating_mul(bucket_ns.max(1)) - 1),
                )
            };
            let links = sqlx::query(
                "SELECT src, src_port, dst, dst_port FROM links WHERE run_id = $1 ORDER BY id",
            )
            .bind(id)
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(|l| {
                Ok(DirLink {
                    src: l.try_get(0)?,
                    src_port: l.try_get::<i64, _>(1)? as u16,
                    dst: l.try_get(2)?,
                    dst_port: l.try_get::<i64, _>(3)? as u16,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
            let mut paths: Vec<(u16, Vec<u32>)> = Vec::new();
            let pl = sqlx::query(
                "SELECT path_id, link_id FROM path_links WHERE run_id = $1 ORDER BY path_id, pos",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            for row in pl {
                let path = row.try_get::<i64, _>(0)? as u16;
                let link = row.try_get::<i64, _>(1)? as u32;
                match paths.last_mut() {
                    Some((p, ls)) if *p == path => ls.push(link),
                    _ => paths.push((path, vec![link])),
                }
            }
            out.push(Run {
                id,
                bucket_ns,
                store: mode,
                span_ns,
                links,
                paths,
                topology: store.run_topology(id).await?,
            });
        }
        Ok(out)
    })
}

/// Queueing-delay samples of run `run` from probes sent in
/// `[from_ns, to_ns]`, ordered by link and then time. A run stored with
/// `--store buckets` has none to give: an error, not an empty list that
/// would read as a network without queues.
pub async fn link_samples(
    store: &Store,
    run: RunId,
    from_ns: i64,
    to_ns: i64,
) -> Result<Vec<LinkSample>, StoreError> {
    if store.store_mode(run).await? == StoreMode::Buckets {
        return Err(StoreError::BucketsOnly(run));
    }
    let rows: Vec<(i64, i64, Option<i64>, i64, i64, i64)> = on_pool!(store, pool => sqlx::query_as(
        "SELECT h.probe_id, p.send_ns, h.link_id, h.ingress_ts_us, h.egress_ts_us, h.qdelay_us \
         FROM probes p JOIN hops h ON h.probe_id = p.id \
         WHERE p.run_id = $1 AND p.send_ns BETWEEN $2 AND $3 ORDER BY h.probe_id, h.hop",
    )
    .bind(run)
    .bind(from_ns)
    .bind(to_ns)
    .fetch_all(pool)
    .await)?;
    let mut out: Vec<LinkSample> = Vec::with_capacity(rows.len());
    let (mut probe, mut elapsed_ns) = (i64::MIN, 0i64);
    // The previous hop's sample and egress stamp, until this hop's ingress
    // stamp gives its wire time.
    let mut before: Option<(usize, i64)> = None;
    for (id, send_ns, link, ingress_us, egress_us, qdelay_us) in rows {
        if id != probe {
            (probe, elapsed_ns, before) = (id, 0, None);
        }
        if let Some((i, egress_before)) = before.take() {
            out[i].wire_ns = Some(
                ingress_us
                    .saturating_sub(egress_before)
                    .saturating_mul(1_000),
            );
        }
        if let Some(link) = link {
            before = Some((out.len(), egress_us));
            out.push(LinkSample {
                link: link as u32,
                at_ns: send_ns.saturating_add(elapsed_ns),
                qdelay_ns: qdelay_us.saturating_mul(1_000),
                wire_ns: None,
            });
        }
        // Stamps come from the switches: wild ones saturate, never panic.
        let in_switch_ns = egress_us.saturating_sub(ingress_us).max(0);
        elapsed_ns = elapsed_ns.saturating_add(in_switch_ns.saturating_mul(1_000));
    }
    out.sort_unstable_by_key(|s| (s.link, s.at_ns));
    Ok(out)
}

/// Per-path arrivals and losses of run `run` in the buckets covering
/// `[from_ns, to_ns]`.
pub async fn path_loss(
    store: &Store,
    run: &Run,
    from_ns: i64,
    to_ns: i64,
) -> Result<Vec<PathLoss>, StoreError> {
    let b = run.bucket_ns.max(1);
    let rows: Vec<(i64, i64, i64, i64)> = on_pool!(store, pool => sqlx::query_as(
        "SELECT path_id, bucket, probes, lost FROM path_buckets \
         WHERE run_id = $1 AND bucket BETWEEN $2 AND $3 ORDER BY path_id, bucket",
    )
    .bind(run.id)
    .bind(from_ns.div_euclid(b))
    .bind(to_ns.div_euclid(b))
    .fetch_all(pool)
    .await)?;
    Ok(rows
        .into_iter()
        .map(|(path, bucket, probes, lost)| PathLoss {
            path: path as u16,
            bucket,
            probes,
            lost,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: RunId, span_ns: Option<(i64, i64)>) -> Run {
        Run {
            id,
            bucket_ns: 1,
            store: StoreMode::Raw,
            span_ns,
            links: Vec::new(),
            paths: Vec::new(),
            topology: None,
        }
    }

    #[test]
    fn the_run_sharing_most_time_is_taken_and_none_that_shares_none() {
        let runs = || {
            vec![
                run(1, Some((0, 100))),
                run(2, Some((90, 300))),
                run(3, None),
            ]
        };
        let id = |lo, hi| overlapping_most(runs(), lo, hi).map(|r| r.id);
        assert_eq!(id(50, 120), Some(1));
        assert_eq!(id(95, 400), Some(2));
        // One instant inside a run still shares a moment with it.
        assert_eq!(id(200, 200), Some(2));
        // Traces from another time: no run's INT goes with them.
        assert_eq!(id(301, 1_000), None);
        assert_eq!(id(-50, -1), None);
    }
}
