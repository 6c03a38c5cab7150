//! Spans in the telemetry database (schema in `migrations/0003_spans.sql`).
//!
//! The OTLP receiver writes whole export requests here, several at a time in
//! one transaction (`write`: each span stored, a duplicate or a conflict); a
//! diagnosis reads them back. Rows hold what the sender
//! said, ids as hex and attribute lists as JSON, so the table is readable
//! with plain SQL (`attributes ->> 'http.method'`).

mod write;

use crate::{on_pool, Pool, Store, StoreError};
use sqlx::Row;
use std::collections::HashMap;

pub use write::SpanOutcome;

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

/// When one span was stored: what the receiver's export reads to find the
/// traces no span arrived for lately.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanArrival {
    pub trace_id: String,
    pub span_id: String,
    pub start_ns: i64,
    pub received_ns: i64,
}

/// Every span in a database, with the resources they name by id.
#[derive(Debug, Default)]
pub struct StoredSpans {
    pub resources: HashMap<i64, ResourceRow>,
    pub spans: Vec<StoredSpan>,
}

/// A [`StoredSpan`] from a row of `SELECT {SPAN_COLUMNS}` (a macro, as
/// `on_pool!`: the same reads of either backend's row), as a
/// `Result<StoredSpan, sqlx::Error>`.
macro_rules! stored_span {
    ($r:expr) => {{
        let r = &$r;
        // Integers are stored as i64 on both backends.
        let int = |c: &str| r.try_get::<i64, _>(c);
        Ok::<_, sqlx::Error>(StoredSpan {
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
    }};
}
use stored_span;

const SPAN_COLUMNS: &str = "trace_id, span_id, parent_span_id, trace_state, flags, name, kind, \
     start_ns, end_ns, resource_id, scope_name, scope_version, attributes, events, links, \
     status_code, status_message, dropped_attributes, dropped_events, dropped_links, received_ns";

impl Store {
    /// Every stored span, in the order they were stored.
    pub async fn spans(&self) -> Result<StoredSpans, StoreError> {
        self.spans_between(i64::MIN, i64::MAX).await
    }

    /// The spans stored after `after_ns` (on the receiver's clock, as
    /// `received_ns`), in the order they were stored.
    pub async fn span_arrivals(&self, after_ns: i64) -> Result<Vec<SpanArrival>, StoreError> {
        let order = match self.pool() {
            Pool::Sqlite(_) => "rowid",
            Pool::Postgres(_) => "seq",
        };
        let sql = format!(
            "SELECT trace_id, span_id, start_ns, received_ns FROM spans \
             WHERE received_ns > $1 ORDER BY {order}"
        );
        on_pool!(self, pool => {
            let rows = sqlx::query(&sql).bind(after_ns).fetch_all(pool).await?;
            let arrivals = rows
                .into_iter()
                .map(|r| {
                    Ok(SpanArrival {
                        trace_id: r.try_get(0)?,
                        span_id: r.try_get(1)?,
                        start_ns: r.try_get(2)?,
                        received_ns: r.try_get(3)?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()?;
            Ok(arrivals)
        })
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
                .map(|r| stored_span!(r))
                .collect::<Result<_, sqlx::Error>>()?;
            Ok(StoredSpans { resources, spans })
        })
    }
}
