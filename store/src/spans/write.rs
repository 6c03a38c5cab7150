//! Storing export requests: one transaction for a whole batch of them, and
//! for each span what became of it. A span whose ids are already stored is
//! kept as it was: the same content is an exporter's retry (a duplicate,
//! acknowledged but not counted as stored twice), different content a
//! conflict the sender must hear about (OTLP `partial_success`).

use super::{stored_span, SpanBatch, SpanRow, StoredSpan, SPAN_COLUMNS};
use crate::write::close_on_error;
use crate::{insert_rows, Pool, Store, StoreError};
use sqlx::postgres::PgConnection;
use sqlx::sqlite::SqliteConnection;
use sqlx::{Connection as _, Row};
use std::collections::{HashMap, HashSet};

/// What became of one span of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanOutcome {
    /// A new row.
    Stored,
    /// Already stored with the same content and resource.
    Duplicate,
    /// Its trace and span id are stored with other content; the stored span
    /// is kept.
    Conflict,
}

/// SQLite: one span a statement, prepared once a transaction and run through
/// rusqlite on sqlx's own connection: the receiver's profile showed sqlx's
/// multi-row `VALUES` statements (placeholders formatted into text, every
/// string copied twice, 30 000 bindings cleared and statements re-prepared
/// per chunk) costing more than SQLite's insert itself.
/// PostgreSQL takes multi-row `INSERT`s over the wire instead.
static INSERT_SPAN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT OR IGNORE INTO spans ({SPAN_COLUMNS}) VALUES ({})",
        ["?"; 21].join(", ")
    )
});

/// Upserts `$resources` (`&[ResourceRow]`) in transaction `$tx` and
/// evaluates to their ids, in order (a macro, as `execute_all!`: the same
/// statements on either backend's transaction).
macro_rules! resource_ids {
    ($tx:expr, $resources:expr) => {{
        let mut ids = Vec::with_capacity($resources.len());
        let mut seen: HashMap<&super::ResourceRow, i64> = HashMap::new();
        for r in $resources {
            if let Some(&id) = seen.get(r) {
                ids.push(id);
                continue;
            }
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO span_resources (service, attributes) VALUES ($1, $2) \
                 ON CONFLICT (attributes) DO UPDATE SET service = excluded.service RETURNING id",
            )
            .bind(&r.service)
            .bind(&r.attributes)
            .fetch_one(&mut *$tx)
            .await?;
            seen.insert(r, id);
            ids.push(id);
        }
        ids
    }};
}

impl Store {
    /// Stores `batch` in one transaction: all of it or, on error, none (and
    /// then nothing of it stays locked: a SQLite connection whose write
    /// failed is closed). Returns each span's outcome, in order.
    pub async fn write_spans(&self, batch: &SpanBatch) -> Result<Vec<SpanOutcome>, StoreError> {
        let now = intpath_core::time::now_ns() as i64;
        match self.pool() {
            Pool::Sqlite(pool) => {
                let mut conn = pool.acquire().await?;
                let r = write_sqlite(&mut conn, batch, now).await;
                close_on_error(conn, r).await
            }
            Pool::Postgres(pool) => {
                let mut conn = pool.acquire().await?;
                write_pg(&mut conn, batch, now).await
            }
        }
    }
}

async fn write_sqlite(
    conn: &mut SqliteConnection,
    batch: &SpanBatch,
    now: i64,
) -> Result<Vec<SpanOutcome>, StoreError> {
    let mut tx = conn.begin().await?;
    let ids = resource_ids!(tx, &batch.resources);
    let mut inserted = Vec::with_capacity(batch.spans.len());
    {
        let mut locked = tx.lock_handle().await?;
        // SAFETY: the handle is open and ours alone while `locked` lives
        // (sqlx's worker waits for the lock), `db` is dropped before it, and
        // a connection made `from_handle` does not close the handle.
        let db = unsafe { rusqlite::Connection::from_handle(locked.as_raw_handle().as_ptr()) }?;
        {
            let mut insert = db.prepare(&INSERT_SPAN)?;
            for (r, s) in &batch.spans {
                let n = insert.execute(rusqlite::params![
                    s.trace_id,
                    s.span_id,
                    s.parent_span_id,
                    s.trace_state,
                    s.flags,
                    s.name,
                    s.kind,
                    s.start_ns,
                    s.end_ns,
                    ids[*r],
                    s.scope_name,
                    s.scope_version,
                    s.attributes,
                    s.events,
                    s.links,
                    s.status_code,
                    s.status_message,
                    s.dropped_attributes,
                    s.dropped_events,
                    s.dropped_links,
                    now,
                ])?;
                inserted.push(n == 1);
            }
        }
        drop(db);
    }
    // Spans not inserted are already stored: looked up one by one (few, and
    // in-process).
    let sql = format!("SELECT {SPAN_COLUMNS} FROM spans WHERE trace_id = $1 AND span_id = $2");
    let mut stored = HashMap::new();
    for (i, (_, s)) in batch.spans.iter().enumerate() {
        if inserted[i] || stored.contains_key(&key(s)) {
            continue;
        }
        let row = sqlx::query(&sql)
            .bind(&s.trace_id)
            .bind(&s.span_id)
            .fetch_one(&mut *tx)
            .await?;
        stored.insert(key(s), stored_span!(row)?);
    }
    tx.commit().await?;
    Ok(outcomes(batch, &ids, &inserted, &stored))
}

async fn write_pg(
    conn: &mut PgConnection,
    batch: &SpanBatch,
    now: i64,
) -> Result<Vec<SpanOutcome>, StoreError> {
    let mut tx = conn.begin().await?;
    let ids = resource_ids!(tx, &batch.resources);
    let spans: Vec<(usize, &SpanRow)> = batch.spans.iter().map(|(r, s)| (*r, s)).collect();
    let statements = insert_rows::<sqlx::Postgres, _>(
        &format!("INSERT INTO spans ({SPAN_COLUMNS}) "),
        "ON CONFLICT (trace_id, span_id) DO NOTHING RETURNING trace_id, span_id",
        21,
        &spans,
        |b, (r, s): (usize, &SpanRow)| {
            b.bind(s.trace_id.as_str())
                .bind(s.span_id.as_str())
                .bind(s.parent_span_id.as_deref())
                .bind(s.trace_state.as_str())
                .bind(i64::from(s.flags))
                .bind(s.name.as_str())
                .bind(i64::from(s.kind))
                .bind(s.start_ns)
                .bind(s.end_ns)
                .bind(ids[r])
                .bind(s.scope_name.as_str())
                .bind(s.scope_version.as_str())
                .bind(s.attributes.as_str())
                .bind(s.events.as_str())
                .bind(s.links.as_str())
                .bind(i64::from(s.status_code))
                .bind(s.status_message.as_str())
                .bind(i64::from(s.dropped_attributes))
                .bind(i64::from(s.dropped_events))
                .bind(i64::from(s.dropped_links))
                .bind(now);
        },
    )?;
    let mut new: HashSet<(String, String)> = HashSet::new();
    for s in statements {
        for row in sqlx::query_with(&s.sql, s.args).fetch_all(&mut *tx).await? {
            new.insert((row.try_get(0)?, row.try_get(1)?));
        }
    }
    // Only the first span of the batch with a new key made the row.
    let inserted: Vec<bool> = batch
        .spans
        .iter()
        .map(|(_, s)| new.remove(&(s.trace_id.clone(), s.span_id.clone())))
        .collect();
    let (traces, span_ids): (Vec<&str>, Vec<&str>) = batch
        .spans
        .iter()
        .zip(&inserted)
        .filter(|(_, &new)| !new)
        .map(|((_, s), _)| (s.trace_id.as_str(), s.span_id.as_str()))
        .unzip();
    let mut stored = HashMap::new();
    if !traces.is_empty() {
        let rows = sqlx::query(&format!(
            "SELECT {SPAN_COLUMNS} FROM spans \
             WHERE (trace_id, span_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))"
        ))
        .bind(&traces)
        .bind(&span_ids)
        .fetch_all(&mut *tx)
        .await?;
        for row in rows {
            let s = stored_span!(row)?;
            stored.insert((s.span.trace_id.clone(), s.span.span_id.clone()), s);
        }
    }
    tx.commit().await?;
    Ok(outcomes(batch, &ids, &inserted, &stored))
}

fn key(s: &SpanRow) -> (String, String) {
    (s.trace_id.clone(), s.span_id.clone())
}

/// Each span's outcome: inserted, or compared with the row its ids hold.
fn outcomes(
    batch: &SpanBatch,
    ids: &[i64],
    inserted: &[bool],
    stored: &HashMap<(String, String), StoredSpan>,
) -> Vec<SpanOutcome> {
    batch
        .spans
        .iter()
        .zip(inserted)
        .map(|((r, s), &new)| match new {
            true => SpanOutcome::Stored,
            false => match stored.get(&key(s)) {
                Some(old) if old.resource_id == ids[*r] && old.span == *s => SpanOutcome::Duplicate,
                _ => SpanOutcome::Conflict,
            },
        })
        .collect()
}
