//! Spans in the telemetry database (schema in `migrations/0003_spans.sql`).
//!
//! The OTLP receiver writes whole export requests here, several at a time in
//! one transaction; a diagnosis reads them back. Rows hold what the sender
//! said, ids as hex and attribute lists as JSON, so the table is readable
//! with plain SQL (`attributes ->> 'http.method'`).

use crate::{execute_all, insert_rows, on_pool, Pool, Store, StoreError};
use sqlx::Row;
use std::collections::HashMap;

/// A resource: its `service.name` and all its attributes as a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceRow {
    pub service: String,
    pub attributes: String,
}

/// One span as stored (see the migration for each column's meaning).
#[derive(Debug, Clone, PartialEq)]
pub struct SpanRow {
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: Option<String>,
    pub trace_state: String,
    pub flags: u32,
    pub name: String,
    pub kind: i32,
    pub start_ns: i64,
    pub end_ns: i64,
    pub scope_name: String,
    pub scope_version: String,
    pub attributes: String,
    pub events: String,
    pub links: String,
    pub status_code: i32,
    pub status_message: String,
    pub dropped_attributes: u32,
    pub dropped_events: u32,
    pub dropped_links: u32,
}

/// Spans ready to store, each naming its resource by position in `resources`.
#[derive(Debug, Default, Clone)]
pub struct SpanBatch {
    pub resources: Vec<ResourceRow>,
    pub spans: Vec<(usize, SpanRow)>,
}

impl SpanBatch {
    /// Moves `other`'s spans into this batch (one transaction for several
    /// export requests).
    pub fn append(&mut self, other: SpanBatch) {
        let base = self.resources.len();
        self.resources.extend(other.resources);
        self.spans
            .extend(other.spans.into_iter().map(|(r, s)| (base + r, s)));
    }
}

/// A stored span and when the receiver stored it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSpan {
    pub resource_id: i64,
    pub span: SpanRow,
    pub received_ns: i64,
}

/// Every span in a database, with the resources they name by id.
#[derive(Debug, Default)]
pub struct StoredSpans {
    pub resources: HashMap<i64, ResourceRow>,
    pub spans: Vec<StoredSpan>,
}

const SPAN_COLUMNS: &str = "trace_id, span_id, parent_span_id, trace_state, flags, name, kind, \
     start_ns, end_ns, resource_id, scope_name, scope_version, attributes, events, links, \
     status_code, status_message, dropped_attributes, dropped_events, dropped_links, received_ns";

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
        let mut seen: HashMap<&ResourceRow, i64> = HashMap::new();
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
    /// Stores `batch` in one transaction: all of it or, on error, none.
    /// A span already stored (same trace and span id) is kept as it was.
    pub async fn write_spans(&self, batch: &SpanBatch) -> Result<(), StoreError> {
        let now = intpath_core::time::now_ns() as i64;
        match self.pool() {
            Pool::Sqlite(pool) => {
                let mut tx = pool.begin().await?;
                let ids = resource_ids!(tx, &batch.resources);
                let mut locked = tx.lock_handle().await?;
                // SAFETY: the handle is open and ours alone while `locked`
                // lives (sqlx's worker waits for the lock), `db` is dropped
                // before it, and a connection made `from_handle` does not
                // close the handle.
                let db =
                    unsafe { rusqlite::Connection::from_handle(locked.as_raw_handle().as_ptr()) }?;
                {
                    let mut insert = db.prepare(&INSERT_SPAN)?;
                    for (r, s) in &batch.spans {
                        insert.execute(rusqlite::params![
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
                    }
                }
                drop(db);
                drop(locked);
                tx.commit().await?;
            }
            Pool::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                let ids = resource_ids!(tx, &batch.resources);
                let spans: Vec<(usize, &SpanRow)> =
                    batch.spans.iter().map(|(r, s)| (*r, s)).collect();
                let statements = insert_rows::<sqlx::Postgres, _>(
                    &format!("INSERT INTO spans ({SPAN_COLUMNS}) "),
                    "ON CONFLICT (trace_id, span_id) DO NOTHING",
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
                execute_all!(tx, statements);
                tx.commit().await?;
            }
        }
        Ok(())
    }

    /// Every stored span, in the order they were stored.
    pub async fn spans(&self) -> Result<StoredSpans, StoreError> {
        self.spans_between(i64::MIN, i64::MAX).await
    }

    /// The stored spans that started within `[since_ns, until_ns]`, in the
    /// order they were stored (one run's spans out of a database that holds
    /// several); every resource, since resources are few.
    pub async fn spans_between(
        &self,
        since_ns: i64,
        until_ns: i64,
    ) -> Result<StoredSpans, StoreError> {
        // Storage order: SQLite's rowid, PostgreSQL's identity column.
        let order = match self.pool() {
            Pool::Sqlite(_) => "rowid",
            Pool::Postgres(_) => "seq",
        };
        let span_sql = format!(
            "SELECT {SPAN_COLUMNS} FROM spans WHERE start_ns BETWEEN $1 AND $2 ORDER BY {order}"
        );
        on_pool!(self, pool => {
            let resources = sqlx::query("SELECT id, service, attributes FROM span_resources")
                .fetch_all(pool)
                .await?
                .into_iter()
                .map(|r| {
                    let row = ResourceRow {
                        service: r.try_get(1)?,
                        attributes: r.try_get(2)?,
                    };
                    Ok((r.try_get::<i64, _>(0)?, row))
                })
                .collect::<Result<_, sqlx::Error>>()?;
            let spans = sqlx::query(&span_sql)
                .bind(since_ns)
                .bind(until_ns)
                .fetch_all(pool)
                .await?
                .into_iter()
                .map(|r| {
                    // Integers are stored as i64 on both backends.
                    let int = |c: &str| r.try_get::<i64, _>(c);
                    Ok(StoredSpan {
                        resource_id: int("resource_id")?,
                        received_ns: int("received_ns")?,
                        span: SpanRow {
                            trace_id: r.try_get("trace_id")?,
                            span_id: r.try_get("span_id")?,
                            parent_span_id: r.try_get("parent_span_id")?,
                            trace_state: r.try_get("trace_state")?,
                            flags: int("flags")? as u32,
                            name: r.try_get("name")?,
                            kind: int("kind")? as i32,
                            start_ns: int("start_ns")?,
                            end_ns: int("end_ns")?,
                            scope_name: r.try_get("scope_name")?,
                            scope_version: r.try_get("scope_version")?,
                            attributes: r.try_get("attributes")?,
                            events: r.try_get("events")?,
                            links: r.try_get("links")?,
                            status_code: int("status_code")? as i32,
                            status_message: r.try_get("status_message")?,
                            dropped_attributes: int("dropped_attributes")? as u32,
                            dropped_events: int("dropped_events")? as u32,
                            dropped_links: int("dropped_links")? as u32,
                        },
                    })
                })
                .collect::<Result<_, sqlx::Error>>()?;
            Ok(StoredSpans { resources, spans })
        })
    }
}
