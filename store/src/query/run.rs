//! What a run measured and where its data lies in time: the frame every
//! other query is asked in.

use super::{QueryError, Window};
use crate::{on_pool, RunId, Store};
use intpath_core::link::{DirLink, LinkSpec};
use intpath_core::plan::NodeName;
use intpath_core::topo::Topology;
use sqlx::Row;
use std::collections::BTreeMap;

/// Most seconds a time bound may lie from the run's first probe: about three
/// years, far beyond any run, and far from overflowing nanoseconds in `i64`.
pub const MAX_SECONDS: f64 = 1e8;

/// Longest silence within one run's data. Probes arrive every few
/// milliseconds while a run lasts, so rows a day or more away from the bulk
/// of a run are not its telemetry but absurd send times an older collector
/// stored without checking them; queries and pictures leave them out.
pub const MAX_GAP_NS: i64 = 86_400_000_000_000;

/// Of the run's stretches of buckets separated by more than `$2` buckets,
/// the one holding the most probes: its first and last bucket, its probes,
/// and the probes of the whole run.
const BULK_SQL: &str = "WITH b AS (
    SELECT bucket, SUM(probes) AS n FROM path_buckets WHERE run_id = $1 GROUP BY bucket),
  g AS (SELECT bucket, n,
        CASE WHEN bucket - LAG(bucket) OVER (ORDER BY bucket) > $2 THEN 1 ELSE 0 END AS brk
        FROM b),
  s AS (SELECT bucket, n, SUM(brk) OVER (ORDER BY bucket ROWS UNBOUNDED PRECEDING) AS seg FROM g)
  SELECT MIN(bucket), MAX(bucket), CAST(SUM(n) AS BIGINT),
         CAST((SELECT SUM(n) FROM b) AS BIGINT)
  FROM s GROUP BY seg ORDER BY 3 DESC, 1 DESC LIMIT 1";

/// What a run measured.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: RunId,
    pub bucket_ns: i64,
    /// Send time of the first probe, if any arrived.
    pub first_ns: Option<i64>,
    /// First and last bucket holding data (of the run's bulk: see
    /// [`MAX_GAP_NS`]).
    pub buckets: Option<(i64, i64)>,
    /// Probes in buckets left out as too far from the rest of the run.
    pub ignored_probes: i64,
    pub switches: Vec<(String, u32)>,
    /// Indexed by link id.
    pub links: Vec<DirLink>,
    /// The labels the run's topology file gave its switches (GraphML or GML
    /// `label`, e.g. "Core"), by switch name; empty when it gave none.
    pub labels: BTreeMap<String, String>,
}

impl RunInfo {
    /// The newest run when `run` is `None`.
    pub async fn load(store: &Store, run: Option<RunId>) -> Result<Self, QueryError> {
        on_pool!(store, pool => {
            let id: RunId = match run {
                Some(r) => r,
                None => sqlx::query_scalar::<_, Option<i64>>("SELECT MAX(id) FROM runs")
                    .fetch_one(pool)
                    .await?
                    .ok_or(QueryError::NoRuns)?,
            };
            let row = sqlx::query("SELECT bucket_ns, first_ns FROM runs WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await?
                .ok_or(QueryError::NoRun(id))?;
            let buckets: (Option<i64>, Option<i64>) = sqlx::query_as(
                "SELECT MIN(b), MAX(b) FROM (SELECT bucket AS b FROM link_buckets WHERE run_id = $1 \
                 UNION ALL SELECT bucket FROM path_buckets WHERE run_id = $1) AS t",
            )
            .bind(id)
            .fetch_one(pool)
            .await?;
            let column = |e: sqlx::Error| QueryError::Schema(format!("runs table of run {id}: {e}"));
            let bucket_ns = row.try_get::<i64, _>(0).map_err(column)?.max(1);
            let max_gap = MAX_GAP_NS / bucket_ns;
            let mut buckets = buckets.0.zip(buckets.1);
            let mut ignored_probes = 0;
            // Only a run spread over more than a day can hold a gap that long.
            if buckets.is_some_and(|(lo, hi)| hi.saturating_sub(lo) > max_gap) {
                let (lo, hi, kept, all): (i64, i64, i64, i64) = sqlx::query_as(BULK_SQL)
                    .bind(id)
                    .bind(max_gap)
                    .fetch_one(pool)
                    .await?;
                buckets = Some((lo, hi));
                ignored_probes = all - kept;
            }
            let switches = sqlx::query_as::<_, (String, i64)>(
                "SELECT name, id FROM switches WHERE run_id = $1 ORDER BY pos",
            )
            .bind(id)
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(|(n, i)| (n, i as u32))
            .collect();
            let links = sqlx::query_as::<_, (String, i64, String, i64)>(
                "SELECT src, src_port, dst, dst_port FROM links WHERE run_id = $1 ORDER BY id",
            )
            .bind(id)
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(|(src, sp, dst, dp)| DirLink {
                src,
                src_port: sp as u16,
                dst,
                dst_port: dp as u16,
            })
            .collect();
            // A database older than its topology column (a reader never
            // migrates) has no labels.
            let topology: Option<String> =
                sqlx::query_scalar("SELECT topology_json FROM runs WHERE id = $1")
                    .bind(id)
                    .fetch_one(pool)
                    .await
                    .ok()
                    .flatten();
            let labels = topology
                .and_then(|json| Topology::from_json(&json, "the run's topology").ok())
                .map(|t| {
                    t.switches()
                        .iter()
                        .filter_map(|s| Some((s.name.clone(), s.label.clone()?)))
                        .collect()
                })
                .unwrap_or_default();
            let mut first_ns: Option<i64> = row.try_get(1).map_err(column)?;
            if let Some((lo, hi)) = buckets {
                let inside = |t: i64| (lo..=hi).contains(&t.div_euclid(bucket_ns));
                if first_ns.is_some_and(|t| !inside(t)) {
                    first_ns = Some(lo.saturating_mul(bucket_ns));
                }
            }
            if let Some((lo, hi)) = buckets.filter(|_| ignored_probes > 0) {
                tracing::warn!(
                    "run {id}: {ignored_probes} probes with send times over a day away from the \
                     run's other {} s ignored (stored by a collector that did not check send times)",
                    ((hi - lo + 1) as f64 * bucket_ns as f64 / 1e9).round()
                );
            }
            Ok(Self {
                id,
                bucket_ns,
                first_ns,
                buckets,
                ignored_probes,
                switches,
                links,
                labels,
            })
        })
    }

    /// A switch as pictures and tables name it: `s3 Core` when the topology
    /// labelled it, else its name.
    pub fn switch_name(&self, name: &str) -> String {
        match self.labels.get(name) {
            Some(label) => format!("{name} {label}"),
            None => name.to_owned(),
        }
    }

    /// A link's ends as the topology labelled them (`Core->BldgA`, an
    /// unlabelled end by its name); `None` when neither end has a label.
    pub fn link_label(&self, l: &DirLink) -> Option<String> {
        let (a, b) = (self.labels.get(&l.src), self.labels.get(&l.dst));
        (a.is_some() || b.is_some()).then(|| {
            format!(
                "{}->{}",
                a.map_or(l.src.as_str(), String::as_str),
                b.map_or(l.dst.as_str(), String::as_str)
            )
        })
    }

    /// The buckets between `from` and `to` seconds after the first probe
    /// (defaults: the whole run). An empty, reversed or out-of-range window is
    /// an error, so that nothing is drawn or listed for a typo.
    pub fn window(&self, from: Option<f64>, to: Option<f64>) -> Result<Window, QueryError> {
        for s in [from, to].into_iter().flatten() {
            if !s.is_finite() || s.abs() > MAX_SECONDS {
                return Err(QueryError::Range(format!(
                    "time {s} s is out of range (at most {MAX_SECONDS:e} s from the run's start)"
                )));
            }
        }
        if let (Some(f), Some(t)) = (from, to) {
            if f >= t {
                return Err(QueryError::Range(format!(
                    "--from {f} is not before --to {t}"
                )));
            }
        }
        let (lo, hi) = self.buckets.unwrap_or((0, -1));
        let origin = self.first_ns.unwrap_or(lo.saturating_mul(self.bucket_ns));
        // Within MAX_SECONDS of an i64 origin, so no overflow.
        let ns = |s: f64| origin.saturating_add((s * 1e9) as i64);
        let mut w = Window {
            from: from.map_or(lo, |s| ns(s).div_euclid(self.bucket_ns)),
            // `to` is exclusive: the last bucket starting before it.
            to: to.map_or(hi, |s| (ns(s) - 1).div_euclid(self.bucket_ns)),
        };
        if self.ignored_probes > 0 {
            // The ignored rows stay out however wide the range asked for.
            w.from = w.from.max(lo);
            w.to = w.to.min(hi);
        }
        Ok(w)
    }

    /// Start of `bucket`, in seconds after the first probe.
    pub fn seconds(&self, bucket: i64) -> f64 {
        let origin = self.first_ns.unwrap_or(0);
        (bucket as f64 * self.bucket_ns as f64 - origin as f64) / 1e9
    }

    /// A link named as intpath prints it (`SRC:PORT->DST`), or by
    /// `SRC:PORT` or `SRC->DST` ([`LinkSpec`]).
    pub fn find_link(&self, spec: &str) -> Result<u32, QueryError> {
        LinkSpec::parse(spec)
            .and_then(|s| self.links.iter().position(|l| s.matches(l)))
            .map(|i| i as u32)
            .ok_or_else(|| QueryError::NoLink(spec.to_owned(), self.id))
    }
}

/// One planned path of a run and how many of its probes are stored: what
/// `intpath watch` polls to notice a path whose probes stopped arriving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathProgress {
    pub path: u16,
    /// Switches in visiting order, as planned.
    pub nodes: Vec<NodeName>,
    /// Probes of the path stored so far (`path_stats`, kept whatever the
    /// run's `--store` mode); `None` before the first.
    pub received: Option<i64>,
}

/// The newest run and the progress of each of its paths; `None` for a
/// database without runs. One keyed lookup per path, so cheap to poll
/// however long the run.
pub async fn path_progress(
    store: &Store,
) -> Result<Option<(RunId, Vec<PathProgress>)>, QueryError> {
    on_pool!(store, pool => {
        let Some(run) = sqlx::query_scalar::<_, Option<RunId>>("SELECT MAX(id) FROM runs")
            .fetch_one(pool)
            .await?
        else {
            return Ok(None);
        };
        let paths: Vec<(i64, String, Option<i64>)> = sqlx::query_as(
            "SELECT p.id, p.nodes, s.received FROM paths p \
             LEFT JOIN path_stats s ON s.run_id = p.run_id AND s.path_id = p.id \
             WHERE p.run_id = $1 ORDER BY p.id",
        )
        .bind(run)
        .fetch_all(pool)
        .await?;
        let out = paths
            .into_iter()
            .map(|(id, nodes, received)| PathProgress {
                path: id as u16,
                nodes: serde_json::from_str(&nodes).unwrap_or_default(),
                received,
            })
            .collect();
        Ok(Some((run, out)))
    })
}

/// One run as `query runs` lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunSummary {
    pub run: RunId,
    pub topology: String,
    pub plan: String,
    pub bucket_ms: i64,
    /// Which raw rows the run kept (`collect --store`).
    pub store: String,
    /// Probes in the run's buckets: every valid probe that arrived.
    pub probes: i64,
    /// Of those, the ones kept as raw rows, and their hop records.
    pub raw_probes: i64,
    pub hops: i64,
}

/// Every run in the database, oldest first.
pub async fn runs(store: &Store) -> Result<Vec<RunSummary>, QueryError> {
    let rows: Vec<(i64, String, String, i64, i64, i64, i64)> = on_pool!(store, pool => sqlx::query_as(
        "SELECT r.id, r.topology, r.plan_algo, r.bucket_ns / 1000000, \
         (SELECT CAST(COALESCE(SUM(probes), 0) AS BIGINT) FROM path_buckets WHERE run_id = r.id), \
         COUNT(p.id), CAST(COALESCE(SUM(p.hops), 0) AS BIGINT) \
         FROM runs r LEFT JOIN probes p ON p.run_id = r.id GROUP BY r.id ORDER BY r.id",
    )
    .fetch_all(pool)
    .await)?;
    let mut out = Vec::with_capacity(rows.len());
    for (run, topology, plan, bucket_ms, probes, raw_probes, hops) in rows {
        out.push(RunSummary {
            run,
            topology,
            plan,
            bucket_ms,
            store: store.store_mode(run).await?.to_string(),
            probes,
            raw_probes,
            hops,
        });
    }
    Ok(out)
}
