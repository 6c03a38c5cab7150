//! The SQLite telemetry store (schema in `collector/migrations`).
//!
//! One writer, WAL journal, `synchronous = NORMAL`: a committed batch survives
//! a crash of the collector, and readers (queries, heatmaps) never block it.
//! Rows go in as multi-row INSERTs with thousands of binds per statement
//! inside one transaction per batch, and a probe's hop records travel in its
//! own row (a JSON array; the `hops` view unfolds them): one row per probe
//! rather than one per hop is what takes the store towards a million hop
//! records per second.

use crate::ingest::{BadStoreMode, Batch, StoreMode};
use crate::links::LinkMap;
use intpath_core::plan::Plan;
use sqlx::query_builder::Separated;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{QueryBuilder, Row, Sqlite, SqlitePool};
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
    #[error("run {run}: {source}")]
    StoreMode { run: RunId, source: BadStoreMode },
    #[error(
        "run {0} was stored with --store buckets: it kept no hop records, which this needs \
         (collect with --store raw or --store sampled:N)"
    )]
    BucketsOnly(RunId),
    #[error("database: {0}")]
    Sql(#[from] sqlx::Error),
    /// From the span writer's statements, which bypass sqlx (`store::spans`).
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
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
        // A whole batch's pages stay in memory until commit instead of
        // spilling to the WAL mid-transaction (64 MiB; the default is 2).
        .pragma("cache_size", "-65536")
        // 16 KiB pages for new databases: the store is bound by the write
        // system calls it makes (one per WAL frame, i.e. per page, and again
        // at checkpoint), and a 1 KB probe row fills 4 KiB pages fast.
        .page_size(16384)
        // Checkpoint (copy the WAL into the database and fsync both) every
        // 64 MiB of WAL (in pages of at most 16 KiB) instead of every 1000
        // pages: a batch is a few MiB, so the default checkpointed every
        // other batch, rewriting the same index and bucket pages and paying
        // two fsyncs each time.
        .pragma("wal_autocheckpoint", "4096")
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

    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Records a new run with the topology and plan it measures, keeping
    /// every raw probe row.
    pub async fn begin_run(
        &self,
        links: &LinkMap,
        plan: &Plan,
        bucket_ns: u64,
    ) -> Result<RunId, StoreError> {
        self.begin_run_storing(links, plan, bucket_ns, StoreMode::Raw)
            .await
    }

    /// Records a new run that keeps the raw rows `mode` says.
    pub async fn begin_run_storing(
        &self,
        links: &LinkMap,
        plan: &Plan,
        bucket_ns: u64,
        mode: StoreMode,
    ) -> Result<RunId, StoreError> {
        let mut tx = self.pool.begin().await?;
        let run: RunId = sqlx::query_scalar(
            "INSERT INTO runs (started_ns, bucket_ns, topology, plan_algo, store_mode) \
             VALUES (?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(crate::parse::now_ns() as i64)
        .bind(bucket_ns as i64)
        .bind(&plan.topology)
        .bind(&plan.algo)
        .bind(mode.to_string())
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

    /// Which raw rows run `run` kept. A database from before migration
    /// 0005 (read, never migrated, by the query commands) kept them all.
    pub async fn store_mode(&self, run: RunId) -> Result<StoreMode, StoreError> {
        let row = sqlx::query("SELECT * FROM runs WHERE id = ?")
            .bind(run)
            .fetch_one(&self.pool)
            .await?;
        match row.try_get::<String, _>("store_mode") {
            Ok(mode) => mode
                .parse()
                .map_err(|source| StoreError::StoreMode { run, source }),
            Err(sqlx::Error::ColumnNotFound(_)) => Ok(StoreMode::Raw),
            Err(e) => Err(e.into()),
        }
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
        insert_rows(
            c,
            "INSERT INTO probes (id, run_id, path_id, seq, send_ns, recv_ns, e2e_ns, hops, ts0_us, \
             records) ",
            "",
            10,
            &batch.probes,
            |mut b, p| {
                b.push_bind(p.id)
                    .push_bind(run)
                    .push_bind(i64::from(p.path_id))
                    .push_bind(i64::from(p.sequence))
                    .push_bind(p.send_ns)
                    .push_bind(p.recv_ns)
                    .push_bind(p.recv_ns.wrapping_sub(p.send_ns))
                    .push_bind(i64::from(p.hops))
                    .push_bind(p.ts0_us)
                    .push_bind(p.records.as_str());
            },
        )
        .await?;
        let links: Vec<_> = batch.links.iter().collect();
        insert_rows(
            c,
            "INSERT INTO link_buckets (run_id, link_id, bucket, samples, qdepth_min, qdepth_sum, \
             qdepth_max, qdelay_min, qdelay_sum, qdelay_max) ",
            " ON CONFLICT (run_id, link_id, bucket) DO UPDATE SET \
             samples = samples + excluded.samples, \
             qdepth_min = min(qdepth_min, excluded.qdepth_min), \
             qdepth_sum = qdepth_sum + excluded.qdepth_sum, \
             qdepth_max = max(qdepth_max, excluded.qdepth_max), \
             qdelay_min = min(qdelay_min, excluded.qdelay_min), \
             qdelay_sum = qdelay_sum + excluded.qdelay_sum, \
             qdelay_max = max(qdelay_max, excluded.qdelay_max)",
            10,
            &links,
            |mut b, ((link, bucket), a)| {
                b.push_bind(run)
                    .push_bind(i64::from(*link))
                    .push_bind(*bucket)
                    .push_bind(a.samples as i64)
                    .push_bind(i64::from(a.qdepth_min))
                    .push_bind(a.qdepth_sum as i64)
                    .push_bind(i64::from(a.qdepth_max))
                    .push_bind(i64::from(a.qdelay_min))
                    .push_bind(a.qdelay_sum as i64)
                    .push_bind(i64::from(a.qdelay_max));
            },
        )
        .await?;
        let paths: Vec<_> = batch.paths.iter().collect();
        insert_rows(
            c,
            "INSERT INTO path_buckets (run_id, path_id, bucket, probes, lost, duplicates, \
             reordered, e2e_sum_ns, e2e_max_ns) ",
            " ON CONFLICT (run_id, path_id, bucket) DO UPDATE SET \
             probes = probes + excluded.probes, lost = lost + excluded.lost, \
             duplicates = duplicates + excluded.duplicates, \
             reordered = reordered + excluded.reordered, \
             e2e_sum_ns = e2e_sum_ns + excluded.e2e_sum_ns, \
             e2e_max_ns = max(e2e_max_ns, excluded.e2e_max_ns)",
            9,
            &paths,
            |mut b, ((path, bucket), a)| {
                b.push_bind(run)
                    .push_bind(i64::from(*path))
                    .push_bind(*bucket)
                    .push_bind(a.probes as i64)
                    .push_bind(a.lost)
                    .push_bind(a.duplicates as i64)
                    .push_bind(a.reordered as i64)
                    .push_bind(a.e2e_sum_ns)
                    .push_bind(a.e2e_max_ns);
            },
        )
        .await?;
        let stats: Vec<_> = batch.path_stats.iter().collect();
        insert_rows(
            c,
            "INSERT OR REPLACE INTO path_stats (run_id, path_id, first_seq, last_seq, received, \
             duplicates, reordered, lost, restarts) ",
            "",
            9,
            &stats,
            |mut b, (path, s)| {
                b.push_bind(run)
                    .push_bind(i64::from(**path))
                    .push_bind(i64::from(s.first_seq))
                    .push_bind(i64::from(s.last_seq))
                    .push_bind(s.received as i64)
                    .push_bind(s.duplicates as i64)
                    .push_bind(s.reordered as i64)
                    .push_bind(s.lost as i64)
                    .push_bind(s.restarts as i64);
            },
        )
        .await?;
        insert_rows(
            c,
            "INSERT OR REPLACE INTO rejects (run_id, reason, count) ",
            "",
            3,
            rejects,
            |mut b, (reason, n)| {
                b.push_bind(run).push_bind(*reason).push_bind(*n as i64);
            },
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

/// `head` + `VALUES (...), (...)` + `tail`, as many rows per statement as the
/// bind limit allows (`cols` binds per row).
async fn insert_rows<'a, T>(
    c: &mut SqliteConnection,
    head: &str,
    tail: &str,
    cols: usize,
    items: &'a [T],
    mut row: impl FnMut(Separated<'_, 'a, Sqlite, &'static str>, &'a T),
) -> Result<(), StoreError> {
    for chunk in items.chunks(MAX_BINDS / cols) {
        let mut q = QueryBuilder::<Sqlite>::new(head);
        q.push_values(chunk, &mut row);
        q.push(tail);
        q.build().execute(&mut *c).await?;
    }
    Ok(())
}

pub mod spans;

#[cfg(test)]
mod migrate_tests;
#[cfg(test)]
mod tests;
