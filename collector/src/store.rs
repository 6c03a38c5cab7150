//! The SQLite telemetry store (schema in `collector/migrations`).
//!
//! One writer, WAL journal, `synchronous = NORMAL`: a committed batch survives
//! a crash of the collector, and readers (queries, heatmaps) never block it.
//! Rows go in as multi-row INSERTs with thousands of binds per statement
//! inside one transaction per batch; that, not per-row statements, is what
//! reaches hundreds of thousands of hop records per second.

use crate::ingest::Batch;
use crate::links::LinkMap;
use intpath_core::plan::Plan;
use sqlx::sqlite::{
    SqliteArguments, SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Arguments, SqlitePool};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Most `?` one statement may hold (SQLite's default limit).
const MAX_BINDS: usize = 32_766;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: cannot open database: {source}")]
    Open { path: PathBuf, source: sqlx::Error },
    #[error("{path}: cannot set up the schema: {source}")]
    Migrate {
        path: PathBuf,
        source: sqlx::migrate::MigrateError,
    },
    #[error("{0}: no such database (the collector's --db writes one)")]
    Missing(PathBuf),
    #[error("{0}: not an intpath telemetry database (no runs table)")]
    NotTelemetry(PathBuf),
    #[error("database: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("database: {0}")]
    Bind(String),
}

/// A run: one collector session with its topology, plan and bucket width.
pub type RunId = i64;

#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
}

fn options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(10))
        .foreign_keys(false)
}

impl Store {
    /// Opens (creating if needed) a database for writing and brings its schema
    /// up to date.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options(path).create_if_missing(true))
            .await
            .map_err(|source| StoreError::Open {
                path: path.to_owned(),
                source,
            })?;
        sqlx::migrate!("./migrations")
            .run(&pool)
            .await
            .map_err(|source| StoreError::Migrate {
                path: path.to_owned(),
                source,
            })?;
        Ok(Self { pool })
    }

    /// Opens an existing database for reading; never creates or changes one.
    pub async fn open_existing(path: &Path) -> Result<Self, StoreError> {
        if !path.is_file() {
            return Err(StoreError::Missing(path.to_owned()));
        }
        let open_err = |source| StoreError::Open {
            path: path.to_owned(),
            source,
        };
        let pool = SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(options(path).create_if_missing(false))
            .await
            .map_err(open_err)?;
        let has_runs: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
        )
        .fetch_optional(&pool)
        .await
        .map_err(open_err)?;
        if has_runs.is_none() {
            return Err(StoreError::NotTelemetry(path.to_owned()));
        }
        Ok(Self { pool })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Records a new run with the topology and plan it measures.
    pub async fn begin_run(
        &self,
        links: &LinkMap,
        plan: &Plan,
        bucket_ns: u64,
    ) -> Result<RunId, StoreError> {
        let mut tx = self.pool.begin().await?;
        let run: RunId = sqlx::query_scalar(
            "INSERT INTO runs (started_ns, bucket_ns, topology, plan_algo) VALUES (?, ?, ?, ?) RETURNING id",
        )
        .bind(crate::parse::now_ns() as i64)
        .bind(bucket_ns as i64)
        .bind(&plan.topology)
        .bind(&plan.algo)
        .fetch_one(&mut *tx)
        .await?;
        for (pos, (name, id)) in links.switches().iter().enumerate() {
            sqlx::query("INSERT INTO switches (run_id, pos, id, name) VALUES (?, ?, ?, ?)")
                .bind(run)
                .bind(pos as i64)
                .bind(i64::from(*id))
                .bind(name)
                .execute(&mut *tx)
                .await?;
        }
        for (id, l) in links.links().iter().enumerate() {
            sqlx::query(
                "INSERT INTO links (run_id, id, src, src_port, dst, dst_port) VALUES (?, ?, ?, ?, ?, ?)",
            )
            .bind(run)
            .bind(id as i64)
            .bind(&l.src)
            .bind(i64::from(l.src_port))
            .bind(&l.dst)
            .bind(i64::from(l.dst_port))
            .execute(&mut *tx)
            .await?;
        }
        for p in &plan.paths {
            let nodes = serde_json::to_string(&p.nodes).unwrap_or_default();
            sqlx::query("INSERT INTO paths (run_id, id, nodes) VALUES (?, ?, ?)")
                .bind(run)
                .bind(i64::from(p.id))
                .bind(nodes)
                .execute(&mut *tx)
                .await?;
            let hops = p.nodes.iter().zip(&p.egress_ports);
            for (pos, (node, port)) in hops.enumerate() {
                let Some(link) = links.egress_link(node, *port) else {
                    continue;
                };
                sqlx::query(
                    "INSERT INTO path_links (run_id, path_id, pos, link_id) VALUES (?, ?, ?, ?)",
                )
                .bind(run)
                .bind(i64::from(p.id))
                .bind(pos as i64)
                .bind(i64::from(link))
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(run)
    }

    /// The first probe id not in use.
    pub async fn next_probe_id(&self) -> Result<i64, StoreError> {
        Ok(
            sqlx::query_scalar::<_, i64>("SELECT COALESCE(MAX(id), 0) + 1 FROM probes")
                .fetch_one(&self.pool)
                .await?,
        )
    }

    /// Writes one batch and the reject counts so far, all in one transaction.
    pub async fn write(
        &self,
        run: RunId,
        batch: &Batch,
        rejects: &[(&str, u64)],
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let c: &mut SqliteConnection = &mut tx;
        if let Some(first) = batch.first_ns {
            sqlx::query("UPDATE runs SET first_ns = min(COALESCE(first_ns, ?1), ?1) WHERE id = ?2")
                .bind(first)
                .bind(run)
                .execute(&mut *c)
                .await?;
        }
        insert_many(
            c,
            "INSERT INTO probes (id, run_id, path_id, seq, send_ns, recv_ns, e2e_ns, hops) VALUES ",
            "",
            &batch.probes,
            |p| {
                [
                    p.id,
                    run,
                    i64::from(p.path_id),
                    i64::from(p.sequence),
                    p.send_ns,
                    p.recv_ns,
                    p.recv_ns.wrapping_sub(p.send_ns),
                    i64::from(p.hops),
                ]
                .map(Some)
            },
        )
        .await?;
        insert_many(
            c,
            "INSERT INTO hops (probe_id, hop, switch_id, ingress_port, egress_port, link_id, \
             ingress_ts_us, egress_ts_us, qdepth, qdelay_us) VALUES ",
            "",
            &batch.hops,
            |h| {
                let r = &h.rec;
                [
                    Some(h.probe_id),
                    Some(i64::from(h.hop)),
                    Some(i64::from(r.switch_id)),
                    Some(i64::from(r.ingress_port)),
                    Some(i64::from(r.egress_port)),
                    h.link.map(i64::from),
                    Some(r.ingress_ts as i64),
                    Some(r.egress_ts as i64),
                    Some(i64::from(r.enq_qdepth)),
                    Some(i64::from(r.deq_timedelta)),
                ]
            },
        )
        .await?;
        let links: Vec<_> = batch.links.iter().collect();
        insert_many(
            c,
            "INSERT INTO link_buckets (run_id, link_id, bucket, samples, qdepth_min, qdepth_sum, \
             qdepth_max, qdelay_min, qdelay_sum, qdelay_max) VALUES ",
            " ON CONFLICT (run_id, link_id, bucket) DO UPDATE SET \
             samples = samples + excluded.samples, \
             qdepth_min = min(qdepth_min, excluded.qdepth_min), \
             qdepth_sum = qdepth_sum + excluded.qdepth_sum, \
             qdepth_max = max(qdepth_max, excluded.qdepth_max), \
             qdelay_min = min(qdelay_min, excluded.qdelay_min), \
             qdelay_sum = qdelay_sum + excluded.qdelay_sum, \
             qdelay_max = max(qdelay_max, excluded.qdelay_max)",
            &links,
            |((link, bucket), a)| {
                [
                    run,
                    i64::from(*link),
                    *bucket,
                    a.samples as i64,
                    i64::from(a.qdepth_min),
                    a.qdepth_sum as i64,
                    i64::from(a.qdepth_max),
                    i64::from(a.qdelay_min),
                    a.qdelay_sum as i64,
                    i64::from(a.qdelay_max),
                ]
                .map(Some)
            },
        )
        .await?;
        let paths: Vec<_> = batch.paths.iter().collect();
        insert_many(
            c,
            "INSERT INTO path_buckets (run_id, path_id, bucket, probes, lost, duplicates, \
             reordered, e2e_sum_ns, e2e_max_ns) VALUES ",
            " ON CONFLICT (run_id, path_id, bucket) DO UPDATE SET \
             probes = probes + excluded.probes, lost = lost + excluded.lost, \
             duplicates = duplicates + excluded.duplicates, \
             reordered = reordered + excluded.reordered, \
             e2e_sum_ns = e2e_sum_ns + excluded.e2e_sum_ns, \
             e2e_max_ns = max(e2e_max_ns, excluded.e2e_max_ns)",
            &paths,
            |((path, bucket), a)| {
                [
                    run,
                    i64::from(*path),
                    *bucket,
                    a.probes as i64,
                    a.lost,
                    a.duplicates as i64,
                    a.reordered as i64,
                    a.e2e_sum_ns,
                    a.e2e_max_ns,
                ]
                .map(Some)
            },
        )
        .await?;
        let stats: Vec<_> = batch.path_stats.iter().collect();
        insert_many(
            c,
            "INSERT OR REPLACE INTO path_stats (run_id, path_id, first_seq, last_seq, received, \
             duplicates, reordered, lost, restarts) VALUES ",
            "",
            &stats,
            |(path, s)| {
                [
                    run,
                    i64::from(**path),
                    i64::from(s.first_seq),
                    i64::from(s.last_seq),
                    s.received as i64,
                    s.duplicates as i64,
                    s.reordered as i64,
                    s.lost as i64,
                    s.restarts as i64,
                ]
                .map(Some)
            },
        )
        .await?;
        insert_many(
            c,
            "INSERT OR REPLACE INTO rejects (run_id, reason, count) VALUES ",
            "",
            rejects,
            |(reason, n)| (run, reason.to_string(), *n as i64),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Waits for open statements, checkpoints the WAL and closes the file.
    pub async fn close(self) {
        self.pool.close().await;
    }
}

/// A row's values, bound in column order.
trait Row {
    const COLS: usize;
    fn bind(self, args: &mut SqliteArguments<'_>) -> Result<(), sqlx::error::BoxDynError>;
}

impl<const N: usize> Row for [Option<i64>; N] {
    const COLS: usize = N;
    fn bind(self, args: &mut SqliteArguments<'_>) -> Result<(), sqlx::error::BoxDynError> {
        self.into_iter().try_for_each(|v| args.add(v))
    }
}

impl Row for (i64, String, i64) {
    const COLS: usize = 3;
    fn bind(self, args: &mut SqliteArguments<'_>) -> Result<(), sqlx::error::BoxDynError> {
        args.add(self.0)?;
        args.add(self.1)?;
        args.add(self.2)
    }
}

/// `head` + `(?, ...), (?, ...)` + `tail`, as many rows per statement as the
/// bind limit allows.
async fn insert_many<T, R: Row>(
    c: &mut SqliteConnection,
    head: &str,
    tail: &str,
    items: &[T],
    row: impl Fn(&T) -> R,
) -> Result<(), StoreError> {
    let per_stmt = MAX_BINDS / R::COLS;
    let tuple = format!("({})", vec!["?"; R::COLS].join(","));
    for chunk in items.chunks(per_stmt) {
        let mut sql =
            String::with_capacity(head.len() + tail.len() + chunk.len() * (tuple.len() + 1));
        sql.push_str(head);
        for i in 0..chunk.len() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&tuple);
        }
        sql.push_str(tail);
        let mut args = SqliteArguments::default();
        for item in chunk {
            row(item)
                .bind(&mut args)
                .map_err(|e| StoreError::Bind(e.to_string()))?;
        }
        sqlx::query_with(&sql, args).execute(&mut *c).await?;
    }
    Ok(())
}
