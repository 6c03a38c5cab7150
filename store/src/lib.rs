//! The telemetry store: a SQLite file (the embedded default) or a PostgreSQL
//! database that many collectors share (schemas in `store/migrations` and
//! `store/migrations-postgres`), and everything that reads it back.
//!
//! Both backends run the same code: [`on_pool!`] expands a query once per
//! backend, statements use `$1`-style parameters (both drivers take them) and
//! the few statements whose dialects differ sit side by side in [`sql`].
//! SQLite: one writer, WAL journal, `synchronous = NORMAL`, so a committed
//! batch survives a crash of the collector and readers never block it.
//! PostgreSQL: probes arrive by `COPY` into time partitions made on demand
//! ([`partitions`]), ids from sequences, bucket upserts merge additively, so
//! concurrent collectors neither collide nor lose counts. A probe's hop
//! records travel in its own row (a JSON array; the `hops` view unfolds them):
//! one row per probe rather than one per hop is what takes the store towards
//! a million hop records per second.
//!
//! Writers hand it typed rows ([`rows`]: a batch of probes and bucket
//! aggregates, [`spans`]); readers ask [`query`] (per-link and per-path
//! metrics in a run's time frame, what `intpath query` and the heatmaps
//! show), [`report`] (those answers as [`table::Table`]s) and [`samples`]
//! (hop samples, path loss and runs as a diagnosis places them in time).
//! [`links`] numbers a topology's directed links the way the store does.

pub mod counters;
mod db;
pub mod links;
mod migrations;
mod open;
pub mod partitions;
pub mod query;
pub mod report;
pub mod rows;
mod runs;
pub mod samples;
pub mod spans;
mod sql;
mod store;
pub mod table;
mod write;

pub use db::Db;
pub use links::LinkMap;
pub use partitions::Retention;
pub use rows::{BadStoreMode, StoreMode};
pub(crate) use store::on_pool;
pub(crate) use store::Pool;
pub use store::{ProbeLoad, Store};
pub(crate) use write::insert_rows;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{db}: cannot open database: {source}")]
    Open { db: Db, source: sqlx::Error },
    #[error("{db}: cannot set up the schema: {source}")]
    Migrate {
        db: Db,
        source: sqlx::migrate::MigrateError,
    },
    #[error("{0}: no such database file (the collector's --db writes one)")]
    Missing(Db),
    #[error("{0}: not an intpath telemetry database (no runs table)")]
    NotTelemetry(Db),
    #[error("{db}: the database file is damaged ({detail}); restore it from a copy")]
    Damaged { db: Db, detail: String },
    #[error(
        "{db}: holds {tables} tables of another application and no intpath schema; \
         refusing to add ours (give a new file)"
    )]
    Foreign { db: Db, tables: usize },
    #[error(
        "{db}: cannot open read-only ({source}) and its WAL holds changes not yet in the \
         file: open it where the directory is writable, or copy the file with its -wal"
    )]
    UnmergedWal { db: Db, source: sqlx::Error },
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

/// A run: one collector session (or several sharing a key) with its
/// topology, plan and bucket width.
pub type RunId = i64;

#[cfg(test)]
mod migrate_tests;
#[cfg(test)]
mod tests;
