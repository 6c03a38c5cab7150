//! Reads the evidence a diagnosis needs back out of the store.
//!
//! Times in and out are seconds after the run's first probe; inside they are
//! bucket numbers (`send_ns / bucket_ns`). Loss is measured per path; a link's
//! loss is the lowest loss of the paths crossing it, since a path that lost
//! nothing clears every link it crossed.

use crate::links::DirLink;
use crate::store::{RunId, Store, StoreError};
use sqlx::Row;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum Metric {
    /// Egress queue depth when the probe was enqueued (packets).
    Qdepth,
    /// Time the probe waited in the egress queue (µs).
    Qdelay,
    /// Probes lost on the paths crossing the link (%).
    Loss,
}

impl Metric {
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Qdepth => "packets",
            Metric::Qdelay => "µs",
            Metric::Loss => "%",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Metric::Qdepth => "queue depth",
            Metric::Qdelay => "queueing delay",
            Metric::Loss => "loss",
        }
    }

    /// `link_buckets` column prefix.
    fn column(self) -> &'static str {
        match self {
            Metric::Qdepth => "qdepth",
            Metric::Qdelay | Metric::Loss => "qdelay",
        }
    }
}

/// How samples within a window are summarised (queue metrics only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum Stat {
    Mean,
    Max,
    Min,
}

fn stat_sql(metric: Metric, stat: Stat) -> String {
    let c = metric.column();
    match stat {
        Stat::Mean => format!("CAST(SUM({c}_sum) AS REAL) / SUM(samples)"),
        Stat::Max => format!("CAST(MAX({c}_max) AS REAL)"),
        Stat::Min => format!("CAST(MIN({c}_min) AS REAL)"),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the database has no runs")]
    NoRuns,
    #[error("no run {0} in the database")]
    NoRun(RunId),
    #[error("no link {0} in run {1} (give SRC:PORT or SRC->DST)")]
    NoLink(String, RunId),
}

impl From<sqlx::Error> for QueryError {
    fn from(e: sqlx::Error) -> Self {
        QueryError::Store(e.into())
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: RunId,
    pub bucket_ns: i64,
    /// Send time of the first probe, if any arrived.
    pub first_ns: Option<i64>,
    /// First and last bucket holding data.
    pub buckets: Option<(i64, i64)>,
    pub switches: Vec<(String, u32)>,
    /// Indexed by link id.
    pub links: Vec<DirLink>,
}

/// Buckets `from..=to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: i64,
    pub to: i64,
}

impl Window {
    pub fn len(&self) -> usize {
        (self.to - self.from + 1).max(0) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RunInfo {
    /// The newest run when `run` is `None`.
    pub async fn load(store: &Store, run: Option<RunId>) -> Result<Self, QueryError> {
        let pool = store.pool();
        let id: RunId = match run {
            Some(r) => r,
            None => sqlx::query_scalar::<_, Option<i64>>("SELECT MAX(id) FROM runs")
                .fetch_one(pool)
                .await?
                .ok_or(QueryError::NoRuns)?,
        };
        let row = sqlx::query("SELECT bucket_ns, first_ns FROM runs WHERE id = ?")
            .bind(id)
            .fetch_optional(pool)
            .await?
            .ok_or(QueryError::NoRun(id))?;
        let buckets: (Option<i64>, Option<i64>) = sqlx::query_as(
            "SELECT MIN(b), MAX(b) FROM (SELECT bucket AS b FROM link_buckets WHERE run_id = ?1 \
             UNION ALL SELECT bucket FROM path_buckets WHERE run_id = ?1)",
        )
        .bind(id)
        .fetch_one(pool)
        .await?;
        let switches = sqlx::query_as::<_, (String, i64)>(
            "SELECT name, id FROM switches WHERE run_id = ? ORDER BY pos",
        )
        .bind(id)
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|(n, i)| (n, i as u32))
        .collect();
        let links = sqlx::query_as::<_, (String, i64, String, i64)>(
            "SELECT src, src_port, dst, dst_port FROM links WHERE run_id = ? ORDER BY id",
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
        Ok(Self {
            id,
            bucket_ns: row.get::<i64, _>(0).max(1),
            first_ns: row.get(1),
            buckets: buckets.0.zip(buckets.1),
            switches,
            links,
        })
    }

    /// The buckets between `from` and `to` seconds after the first probe
    /// (defaults: the whole run).
    pub fn window(&self, from: Option<f64>, to: Option<f64>) -> Window {
        let (lo, hi) = self.buckets.unwrap_or((0, -1));
        let origin = self.first_ns.unwrap_or(lo * self.bucket_ns);
        let ns = |s: f64| origin + (s * 1e9) as i64;
        Window {
            from: from.map_or(lo, |s| ns(s).div_euclid(self.bucket_ns)),
            // `to` is exclusive: the last bucket starting before it.
            to: to.map_or(hi, |s| (ns(s) - 1).div_euclid(self.bucket_ns)),
        }
    }

    /// Start of `bucket`, in seconds after the first probe.
    pub fn seconds(&self, bucket: i64) -> f64 {
        let origin = self.first_ns.unwrap_or(0);
        (bucket * self.bucket_ns - origin) as f64 / 1e9
    }

    /// A link named `SRC:PORT` or `SRC->DST`.
    pub fn find_link(&self, spec: &str) -> Result<u32, QueryError> {
        let found = if let Some((src, dst)) = spec.split_once("->") {
            self.links.iter().position(|l| l.src == src && l.dst == dst)
        } else if let Some((src, port)) = spec.rsplit_once(':') {
            port.parse::<u16>().ok().and_then(|p| {
                self.links
                    .iter()
                    .position(|l| l.src == src && l.src_port == p)
            })
        } else {
            None
        };
        found
            .map(|i| i as u32)
            .ok_or_else(|| QueryError::NoLink(spec.to_owned(), self.id))
    }
}

/// Rows of `sql`, whose `?1`, `?2`, `?3` are the run and the window's buckets.
async fn fetch_window<T>(
    store: &Store,
    sql: &str,
    run: &RunInfo,
    w: Window,
) -> Result<Vec<T>, QueryError>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + Send + Unpin,
{
    Ok(sqlx::query_as(sql)
        .bind(run.id)
        .bind(w.from)
        .bind(w.to)
        .fetch_all(store.pool())
        .await?)
}

/// One link's metric in one bucket.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SeriesPoint {
    /// Bucket start, seconds after the first probe.
    pub t: f64,
    pub samples: i64,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

/// One value per link (and bucket): the metric summarised by `stat`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LinkValue {
    pub link: u32,
    pub bucket: i64,
    pub value: f64,
}

/// Per-link loss per path bucket, or over the window when `per_bucket` is false.
const LOSS_SQL: &str = "WITH p AS (
    SELECT path_id, {group} AS bucket, SUM(probes) AS n, max(SUM(lost), 0) AS lost
    FROM path_buckets WHERE run_id = ?1 AND bucket BETWEEN ?2 AND ?3
    GROUP BY path_id, {group})
  SELECT pl.link_id, p.bucket, MIN(100.0 * p.lost / (p.n + p.lost))
  FROM p JOIN path_links pl ON pl.run_id = ?1 AND pl.path_id = p.path_id
  WHERE p.n + p.lost > 0
  GROUP BY pl.link_id, p.bucket";

/// The metric of every link, per bucket (`per_bucket`) or over the whole
/// window (then `bucket` is the window's first).
pub async fn link_values(
    store: &Store,
    run: &RunInfo,
    metric: Metric,
    stat: Stat,
    w: Window,
    per_bucket: bool,
) -> Result<Vec<LinkValue>, QueryError> {
    let group = if per_bucket { "bucket" } else { "?2" };
    let sql = match metric {
        Metric::Loss => LOSS_SQL.replace("{group}", group),
        _ => format!(
            "SELECT link_id, {group}, {} FROM link_buckets WHERE run_id = ?1 AND bucket BETWEEN ?2 AND ?3 \
             GROUP BY link_id, {group}",
            stat_sql(metric, stat)
        ),
    };
    let rows: Vec<(i64, i64, Option<f64>)> = fetch_window(store, &sql, run, w).await?;
    Ok(rows
        .into_iter()
        .filter_map(|(link, bucket, v)| {
            v.map(|value| LinkValue {
                link: link as u32,
                bucket,
                value,
            })
        })
        .collect())
}

/// One link's metric, bucket by bucket.
pub async fn link_series(
    store: &Store,
    run: &RunInfo,
    link: u32,
    metric: Metric,
    w: Window,
) -> Result<Vec<SeriesPoint>, QueryError> {
    if metric == Metric::Loss {
        let all = link_values(store, run, metric, Stat::Mean, w, true).await?;
        return Ok(all
            .into_iter()
            .filter(|v| v.link == link)
            .map(|v| SeriesPoint {
                t: run.seconds(v.bucket),
                samples: 1,
                min: v.value,
                mean: v.value,
                max: v.value,
            })
            .collect());
    }
    let c = metric.column();
    let sql = format!(
        "SELECT bucket, samples, {c}_min, CAST({c}_sum AS REAL) / samples, {c}_max FROM link_buckets \
         WHERE run_id = ? AND link_id = ? AND bucket BETWEEN ? AND ? ORDER BY bucket"
    );
    let rows: Vec<(i64, i64, i64, f64, i64)> = sqlx::query_as(&sql)
        .bind(run.id)
        .bind(i64::from(link))
        .bind(w.from)
        .bind(w.to)
        .fetch_all(store.pool())
        .await?;
    Ok(rows
        .into_iter()
        .map(|(b, samples, min, mean, max)| SeriesPoint {
            t: run.seconds(b),
            samples,
            min: min as f64,
            mean,
            max: max as f64,
        })
        .collect())
}

/// End-to-end delay and loss of one path over a window.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PathSummary {
    pub path: u16,
    pub probes: i64,
    pub lost: i64,
    pub loss_pct: f64,
    pub duplicates: i64,
    pub reordered: i64,
    pub e2e_mean_us: f64,
    pub e2e_max_us: f64,
}

pub async fn path_summaries(
    store: &Store,
    run: &RunInfo,
    w: Window,
) -> Result<Vec<PathSummary>, QueryError> {
    let rows: Vec<(i64, i64, i64, i64, i64, f64, i64)> = fetch_window(
        store,
        "SELECT path_id, SUM(probes), max(SUM(lost), 0), SUM(duplicates), SUM(reordered), \
         TOTAL(e2e_sum_ns) / SUM(probes), MAX(e2e_max_ns) \
         FROM path_buckets WHERE run_id = ?1 AND bucket BETWEEN ?2 AND ?3 GROUP BY path_id ORDER BY path_id",
        run,
        w,
    )
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(path, probes, lost, dup, reo, e2e_mean, e2e_max)| PathSummary {
                path: path as u16,
                probes,
                lost,
                loss_pct: if probes + lost > 0 {
                    100.0 * lost as f64 / (probes + lost) as f64
                } else {
                    0.0
                },
                duplicates: dup,
                reordered: reo,
                e2e_mean_us: e2e_mean / 1e3,
                e2e_max_us: e2e_max as f64 / 1e3,
            },
        )
        .collect())
}

/// One planned path of a run and the newest probe stored for it: what
/// `intpath watch` polls to notice a path whose probes stopped arriving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathProgress {
    pub path: u16,
    /// Switches in visiting order, as planned.
    pub nodes: Vec<String>,
    /// Row id of the newest stored probe (by send time); `None` before the
    /// first.
    pub newest_probe: Option<i64>,
}

/// The newest run and the progress of each of its paths; `None` for a
/// database without runs. One indexed lookup per path, so cheap to poll
/// however long the run.
pub async fn path_progress(
    store: &Store,
) -> Result<Option<(RunId, Vec<PathProgress>)>, QueryError> {
    let pool = store.pool();
    let Some(run) = sqlx::query_scalar::<_, Option<RunId>>("SELECT MAX(id) FROM runs")
        .fetch_one(pool)
        .await?
    else {
        return Ok(None);
    };
    let paths: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, nodes FROM paths WHERE run_id = ? ORDER BY id")
            .bind(run)
            .fetch_all(pool)
            .await?;
    let mut out = Vec::with_capacity(paths.len());
    for (id, nodes) in paths {
        let newest_probe = sqlx::query_scalar(
            "SELECT id FROM probes WHERE run_id = ? AND path_id = ? ORDER BY send_ns DESC LIMIT 1",
        )
        .bind(run)
        .bind(id)
        .fetch_optional(pool)
        .await?;
        out.push(PathProgress {
            path: id as u16,
            nodes: serde_json::from_str(&nodes).unwrap_or_default(),
            newest_probe,
        });
    }
    Ok(Some((run, out)))
}

/// Probes not stored, by reason.
pub async fn rejects(store: &Store, run: &RunInfo) -> Result<Vec<(String, i64)>, QueryError> {
    Ok(sqlx::query_as(
        "SELECT reason, count FROM rejects WHERE run_id = ? ORDER BY count DESC, reason",
    )
    .bind(run.id)
    .fetch_all(store.pool())
    .await?)
}
