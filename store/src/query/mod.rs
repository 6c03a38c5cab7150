//! Reads the evidence a diagnosis needs back out of the store.
//!
//! Times in and out are seconds after the run's first probe; inside they are
//! bucket numbers (`send_ns / bucket_ns`). A path's loss comes from its
//! probes' sequence numbers (`path_summaries`); a link's loss from the
//! switches' port counters (`crate::counters`), never from the paths that
//! cross it.

mod run;

pub use run::{path_progress, runs, PathProgress, RunInfo, RunSummary, MAX_SECONDS};

use crate::{on_pool, RunId, Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Metric {
    /// Egress queue depth when the probe was enqueued (packets).
    Qdepth,
    /// Time the probe waited in the egress queue (µs).
    Qdelay,
    /// Packets the link's sender sent and its receiver did not receive,
    /// from the switches' port counters (%).
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

    /// The metric as flags and file names spell it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Qdepth => "qdepth",
            Metric::Qdelay => "qdelay",
            Metric::Loss => "loss",
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Stat {
    Mean,
    Max,
    Min,
}

fn stat_sql(metric: Metric, stat: Stat) -> String {
    let c = metric.column();
    match stat {
        Stat::Mean => format!(
            "CAST(SUM({c}_sum) AS DOUBLE PRECISION) / CAST(SUM(samples) AS DOUBLE PRECISION)"
        ),
        Stat::Max => format!("CAST(MAX({c}_max) AS DOUBLE PRECISION)"),
        Stat::Min => format!("CAST(MIN({c}_min) AS DOUBLE PRECISION)"),
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
    #[error("no link {0} in run {1} (give SRC:PORT->DST, SRC:PORT or SRC->DST)")]
    NoLink(String, RunId),
    #[error("{0}")]
    Range(String),
    #[error("no telemetry in run {run} between {from:.1} and {to:.1} s")]
    NoData { run: RunId, from: f64, to: f64 },
    #[error("not an intpath telemetry database: {0}")]
    Schema(String),
}

impl From<sqlx::Error> for QueryError {
    fn from(e: sqlx::Error) -> Self {
        QueryError::Store(e.into())
    }
}

/// A time range in seconds after the run's first probe; `None`: from the
/// run's start, to its end. `to` is exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimeRange {
    pub from: Option<f64>,
    pub to: Option<f64>,
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

/// Rows of `sql`, whose `$1`, `$2`, `$3` are the run and the window's buckets.
async fn fetch_window<T>(
    store: &Store,
    sql: &str,
    run: &RunInfo,
    w: Window,
) -> Result<Vec<T>, QueryError>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
        + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
        + Send
        + Unpin,
{
    Ok(on_pool!(store, pool => sqlx::query_as(sql)
        .bind(run.id)
        .bind(w.from)
        .bind(w.to)
        .fetch_all(pool)
        .await)?)
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
    let width = if per_bucket { 1 } else { w.len().max(1) as i64 };
    link_columns(store, run, metric, stat, w, width).await
}

/// The metric of every link over columns of `width` buckets from the
/// window's start (`bucket`: a column's first), summarised over each column's
/// samples: how a long window fits a bounded picture.
pub async fn link_columns(
    store: &Store,
    run: &RunInfo,
    metric: Metric,
    stat: Stat,
    w: Window,
    width: i64,
) -> Result<Vec<LinkValue>, QueryError> {
    let group = match width {
        ..=1 => "bucket".to_owned(),
        // An integer of ours, not user text.
        _ => format!("($2 + (bucket - $2) / {width} * {width})"),
    };
    if metric == Metric::Loss {
        return crate::counters::link_loss(store, run, w, width).await;
    }
    let sql = format!(
        "SELECT link_id, {group}, {} FROM link_buckets WHERE run_id = $1 AND bucket BETWEEN $2 AND $3 \
         GROUP BY link_id, {group}",
        stat_sql(metric, stat)
    );
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
        "SELECT bucket, samples, {c}_min, CAST({c}_sum AS DOUBLE PRECISION) / samples, {c}_max \
         FROM link_buckets WHERE run_id = $1 AND link_id = $2 AND bucket BETWEEN $3 AND $4 \
         ORDER BY bucket"
    );
    let rows: Vec<(i64, i64, i64, f64, i64)> = on_pool!(store, pool => sqlx::query_as(&sql)
        .bind(run.id)
        .bind(i64::from(link))
        .bind(w.from)
        .bind(w.to)
        .fetch_all(pool)
        .await)?;
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
        "SELECT path_id, CAST(SUM(probes) AS BIGINT), \
         CAST(CASE WHEN SUM(lost) > 0 THEN SUM(lost) ELSE 0 END AS BIGINT), \
         CAST(SUM(duplicates) AS BIGINT), CAST(SUM(reordered) AS BIGINT), \
         SUM(CAST(e2e_sum_ns AS DOUBLE PRECISION)) / CAST(SUM(probes) AS DOUBLE PRECISION), \
         MAX(e2e_max_ns) \
         FROM path_buckets WHERE run_id = $1 AND bucket BETWEEN $2 AND $3 GROUP BY path_id ORDER BY path_id",
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

/// Probes not stored, by reason.
pub async fn rejects(store: &Store, run: &RunInfo) -> Result<Vec<(String, i64)>, QueryError> {
    Ok(on_pool!(store, pool => sqlx::query_as(
        "SELECT reason, count FROM rejects WHERE run_id = $1 ORDER BY count DESC, reason",
    )
    .bind(run.id)
    .fetch_all(pool)
    .await)?)
}
