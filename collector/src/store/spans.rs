//! Spans in the telemetry database (schema in `migrations/0003_spans.sql`).
//!
//! The OTLP receiver writes whole export requests here, several at a time in
//! one transaction; a diagnosis reads them back. Rows hold what the sender
//! said, ids as hex and attribute lists as JSON, so the table is readable
//! with plain SQL (`attributes ->> 'http.method'`).

use super::{Store, StoreError};
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

/// One span a statement, prepared once a transaction and run through
/// rusqlite on sqlx's own connection: the receiver's profile showed sqlx's
/// multi-row `VALUES` statements (placeholders formatted into text, every
/// string copied twice, 30 000 bindings cleared and statements re-prepared
/// per chunk) costing more than SQLite's insert itself.
static INSERT_SPAN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT OR IGNORE INTO spans ({SPAN_COLUMNS}) VALUES ({})",
        ["?"; 21].join(", ")
    )
});

impl Store {
    /// Stores `batch` in one transaction: all of it or, on error, none.
    /// A span already stored (same trace and span id) is kept as it was.
    pub async fn write_spans(&self, batch: &SpanBatch) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        let mut ids = Vec::with_capacity(batch.resources.len());
        let mut seen: HashMap<&ResourceRow, i64> = HashMap::new();
        for r in &batch.resources {
            if let Some(&id) = seen.get(r) {
                ids.push(id);
                continue;
            }
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO span_resources (service, attributes) VALUES (?, ?) \
                 ON CONFLICT (attributes) DO UPDATE SET service = excluded.service RETURNING id",
            )
            .bind(&r.service)
            .bind(&r.attributes)
            .fetch_one(&mut *tx)
            .await?;
            seen.insert(r, id);
            ids.push(id);
        }
        let now = crate::parse::now_ns() as i64;
        let mut locked = tx.lock_handle().await?;
        // SAFETY: the handle is open and ours alone while `locked` lives
        // (sqlx's worker waits for the lock), `db` is dropped before it, and
        // a connection made `from_handle` does not close the handle.
        let db = unsafe { rusqlite::Connection::from_handle(locked.as_raw_handle().as_ptr()) }?;
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
        Ok(())
    }

    /// Every stored span, in the order they were stored.
    pub async fn spans(&self) -> Result<StoredSpans, StoreError> {
        let resources = sqlx::query("SELECT id, service, attributes FROM span_resources")
            .fetch_all(self.pool())
            .await?
            .into_iter()
            .map(|r| {
                let row = ResourceRow {
                    service: r.get(1),
                    attributes: r.get(2),
                };
                (r.get::<i64, _>(0), row)
            })
            .collect();
        let spans = sqlx::query(&format!("SELECT {SPAN_COLUMNS} FROM spans ORDER BY rowid"))
            .fetch_all(self.pool())
            .await?
            .into_iter()
            .map(|r| StoredSpan {
                resource_id: r.get("resource_id"),
                received_ns: r.get("received_ns"),
                span: SpanRow {
                    trace_id: r.get("trace_id"),
                    span_id: r.get("span_id"),
                    parent_span_id: r.get("parent_span_id"),
                    trace_state: r.get("trace_state"),
                    flags: r.get("flags"),
                    name: r.get("name"),
                    kind: r.get("kind"),
                    start_ns: r.get("start_ns"),
                    end_ns: r.get("end_ns"),
                    scope_name: r.get("scope_name"),
                    scope_version: r.get("scope_version"),
                    attributes: r.get("attributes"),
                    events: r.get("events"),
                    links: r.get("links"),
                    status_code: r.get("status_code"),
                    status_message: r.get("status_message"),
                    dropped_attributes: r.get("dropped_attributes"),
                    dropped_events: r.get("dropped_events"),
                    dropped_links: r.get("dropped_links"),
                },
            })
            .collect();
        Ok(StoredSpans { resources, spans })
    }
}
