//! The store handle: one connection pool of either backend, opened for
//! writing (schema brought up to date) or for reading (never changed).

use crate::{migrations, open};
use crate::{partitions, Db, RunId, StoreError};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The connection pool of either backend.
#[derive(Debug, Clone)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Runs `$body` with `$pool` bound to the store's concrete pool (and the type
/// `$db` to its `sqlx::Database`, if named): the body is compiled once per
/// backend, so queries keep each driver's native types.
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        $crate::on_pool!($store, $pool, _Db => $body)
    };
    ($store:expr, $pool:ident, $db:ident => $body:expr) => {
        match $store.pool() {
            $crate::Pool::Sqlite($pool) => {
                #[allow(dead_code)]
                type $db = sqlx::Sqlite;
                $body
            }
            $crate::Pool::Postgres($pool) => {
                #[allow(dead_code)]
                type $db = sqlx::Postgres;
                $body
            }
        }
    };
}
pub(crate) use on_pool;

#[derive(Debug, Clone)]
pub struct Store {
    pool: Pool,
    db: Db,
    pub(crate) partitions: partitions::Known,
    /// This store's collector id in each run it joined (`collectors` table):
    /// the key of the reject counts it writes.
    pub(crate) collectors: Arc<Mutex<HashMap<RunId, i64>>>,
    pub(crate) probe_load: ProbeLoad,
}

/// How probe rows reach PostgreSQL (SQLite always takes multi-row INSERTs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProbeLoad {
    /// One `COPY ... FROM STDIN` stream per batch.
    #[default]
    Copy,
    /// Multi-row `INSERT`s of up to 65,535 parameters, for comparison
    /// (`benches/store_scaling.rs`).
    Insert,
}

pub(crate) fn sqlite_options(path: &Path) -> SqliteConnectOptions {
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

async fn connect_pg(db: &Db, url: &str, max: u32) -> Result<PgPool, StoreError> {
    let open_err = |source| StoreError::Open {
        db: db.clone(),
        source,
    };
    let opts: PgConnectOptions = url.parse().map_err(open_err)?;
    PgPoolOptions::new()
        .max_connections(max)
        // Fail a write within a second while the server is away (the pool
        // retries connecting until then): the writer keeps the batch,
        // reports the outage and retries at its next flush.
        .acquire_timeout(Duration::from_secs(1))
        .connect_with(opts)
        .await
        .map_err(open_err)
}

impl Store {
    fn new(pool: Pool, db: Db) -> Self {
        Self {
            pool,
            db,
            partitions: partitions::Known::default(),
            collectors: Arc::default(),
            probe_load: ProbeLoad::default(),
        }
    }

    /// Loads PostgreSQL's probe rows the way `load` says.
    pub fn with_probe_load(mut self, load: ProbeLoad) -> Self {
        self.probe_load = load;
        self
    }

    /// Opens (creating if needed) a database for writing and brings its schema
    /// up to date.
    pub async fn open(db: impl Into<Db>) -> Result<Self, StoreError> {
        let db = db.into();
        let migrate_err = |source| StoreError::Migrate {
            db: db.clone(),
            source,
        };
        let pool = match &db {
            Db::Sqlite(path) => {
                open::ensure_ours(&db, path).await?;
                let pool = SqlitePoolOptions::new()
                    .max_connections(1)
                    .connect_with(sqlite_options(path).create_if_missing(true))
                    .await
                    .map_err(|source| StoreError::Open {
                        db: db.clone(),
                        source,
                    })?;
                migrations::migrator(migrations::SQLITE)
                    .await
                    .map_err(migrate_err)?
                    .run(&pool)
                    .await
                    .map_err(migrate_err)?;
                Pool::Sqlite(pool)
            }
            Db::Postgres(url) => {
                let pool = connect_pg(&db, url, 4).await?;
                // The migrator takes an advisory lock: collectors starting
                // together set the schema up once.
                migrations::migrator(migrations::POSTGRES)
                    .await
                    .map_err(migrate_err)?
                    .run(&pool)
                    .await
                    .map_err(migrate_err)?;
                Pool::Postgres(pool)
            }
        };
        Ok(Self::new(pool, db))
    }

    /// Opens an existing database for reading; never creates or changes one
    /// (SQLite: read-only, checked for damage first).
    pub async fn open_existing(db: impl Into<Db>) -> Result<Self, StoreError> {
        let db = db.into();
        let open_err = |source| StoreError::Open {
            db: db.clone(),
            source,
        };
        let (pool, has_runs) = match &db {
            Db::Sqlite(path) => {
                if !path.is_file() {
                    return Err(StoreError::Missing(db));
                }
                let pool = open::reader(&db, path).await?;
                let has: Option<i64> = sqlx::query_scalar(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
                )
                .fetch_optional(&pool)
                .await
                .map_err(open_err)?;
                (Pool::Sqlite(pool), has.is_some())
            }
            Db::Postgres(url) => {
                let pool = connect_pg(&db, url, 2).await?;
                let has: bool = sqlx::query_scalar("SELECT to_regclass('runs') IS NOT NULL")
                    .fetch_one(&pool)
                    .await
                    .map_err(open_err)?;
                (Pool::Postgres(pool), has)
            }
        };
        if !has_runs {
            return Err(StoreError::NotTelemetry(db));
        }
        Ok(Self::new(pool, db))
    }

    pub(crate) fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Where the store lives.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Waits for open statements and closes the connections (SQLite:
    /// checkpoints the WAL).
    pub async fn close(self) {
        on_pool!(self, pool => pool.close().await)
    }
}
