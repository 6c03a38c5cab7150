//! PostgreSQL's time partitions: one per hour for each table that grows with
//! time (`probes` by send time, the bucket tables by bucket start), created
//! as batches need them and dropped whole once older than the retention.
//!
//! Dropping a partition is instant and leaves no dead rows, unlike
//! `DELETE ... WHERE send_ns < ...`, which is why old telemetry goes this way.

use crate::rows::Batch;
use crate::{Pool, Store, StoreError};
use sqlx::PgPool;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Width of one partition.
pub const PARTITION_NS: i64 = 3_600_000_000_000;

/// The partitioned tables and the column each is partitioned by.
const TABLES: [&str; 3] = ["probes", "link_buckets", "path_buckets"];

/// All collectors creating or dropping partitions take this advisory lock,
/// so two never race on the same `CREATE TABLE` (an arbitrary constant:
/// "intpath" in ASCII).
const LOCK: i64 = 0x0069_6e74_7061_7468;

/// Partitions this store already knows to exist (saves a round trip per
/// batch).
#[derive(Debug, Clone, Default)]
pub(crate) struct Known(Arc<Mutex<BTreeSet<i64>>>);

impl Known {
    pub(crate) fn forget(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// How long telemetry is kept (`--retention`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention(pub Duration);

fn name(table: &str, hour: i64) -> String {
    // Negative hours (send times before 1970) get an `n` for the minus sign.
    format!("{table}_h{}", hour.to_string().replace('-', "n"))
}

fn hour_of(ns: i64) -> i64 {
    ns.div_euclid(PARTITION_NS)
}

/// Creates the partitions `batch` writes into that do not exist yet.
pub(crate) async fn ensure(
    pool: &PgPool,
    known: &Known,
    batch: &Batch,
    bucket_ns: i64,
) -> Result<(), StoreError> {
    let needed: BTreeSet<i64> = {
        let k = known.0.lock().unwrap_or_else(|e| e.into_inner());
        let starts = batch
            .links
            .keys()
            .map(|(_, b)| *b)
            .chain(batch.paths.keys().map(|(_, b)| *b));
        batch
            .probes
            .iter()
            .map(|p| hour_of(p.send_ns))
            .chain(starts.map(|b| hour_of(b.wrapping_mul(bucket_ns))))
            .filter(|h| !k.contains(h))
            .collect()
    };
    if needed.is_empty() {
        return Ok(());
    }
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(LOCK)
        .execute(&mut *tx)
        .await?;
    for &h in &needed {
        let (lo, hi) = (
            h.saturating_mul(PARTITION_NS),
            (h + 1).saturating_mul(PARTITION_NS),
        );
        for t in TABLES {
            let sql = format!(
                "CREATE TABLE IF NOT EXISTS {} PARTITION OF {t} FOR VALUES FROM ({lo}) TO ({hi})",
                name(t, h)
            );
            sqlx::query(&sql).execute(&mut *tx).await?;
        }
    }
    tx.commit().await?;
    known
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(needed);
    Ok(())
}

impl Store {
    /// Drops every partition that ends more than `keep` before `now_ns`;
    /// returns how many hours of partitions went. SQLite stores have no
    /// partitions: an error, so a `--retention` is never silently ignored.
    pub async fn drop_expired(&self, keep: Retention, now_ns: i64) -> Result<usize, StoreError> {
        let Pool::Postgres(pool) = self.pool() else {
            return Err(StoreError::Sql(sqlx::Error::Configuration(
                "--retention needs a PostgreSQL store (SQLite has no partitions)".into(),
            )));
        };
        let cutoff = now_ns.saturating_sub(keep.0.as_nanos().min(i64::MAX as u128) as i64);
        let mut tx = pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(LOCK)
            .execute(&mut *tx)
            .await?;
        let names: Vec<String> = sqlx::query_scalar(
            "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
             JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'probes'",
        )
        .fetch_all(&mut *tx)
        .await?;
        let expired: Vec<i64> = names
            .iter()
            .filter_map(|n| n.strip_prefix("probes_h"))
            .filter_map(|h| h.replace('n', "-").parse::<i64>().ok())
            .filter(|h| (h + 1).saturating_mul(PARTITION_NS) <= cutoff)
            .collect();
        for &h in &expired {
            for t in TABLES {
                let sql = format!("DROP TABLE IF EXISTS {}", name(t, h));
                sqlx::query(&sql).execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
        let mut k = self.partitions.0.lock().unwrap_or_else(|e| e.into_inner());
        for h in &expired {
            k.remove(h);
        }
        Ok(expired.len())
    }
}
