//! An OTLP export request, decoded into `opentelemetry-proto`'s messages,
//! turned into rows to store. Spans the store could not represent faithfully
//! (ids of the wrong length, times past 2262) are rejected one by one and
//! counted: the sender learns of them through `partial_success`.

use super::json;
use intpath_store::spans::{ResourceRow, SpanBatch, SpanRow};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span;

/// The rows of one request and what was left out of them.
#[derive(Debug, Default)]
pub struct Converted {
    pub batch: SpanBatch,
    pub rejected: u64,
    /// Why the first rejected span was rejected, and where it was.
    pub first_reject: Option<String>,
}

impl Converted {
    /// The `partial_success.error_message` for this request.
    pub fn reject_message(&self) -> Option<String> {
        let first = self.first_reject.as_deref()?;
        Some(format!(
            "rejected {} of {} spans; first: {first}",
            self.rejected,
            self.rejected + self.batch.spans.len() as u64
        ))
    }
}

pub fn convert(req: ExportTraceServiceRequest) -> Converted {
    let mut out = Converted::default();
    for (ri, rs) in req.resource_spans.into_iter().enumerate() {
        let mut attrs = rs.resource.map(|r| r.attributes).unwrap_or_default();
        let service = attrs
            .iter()
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                any_value::Value::StringValue(s) => Some(s.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let resource = out.batch.resources.len();
        out.batch.resources.push(ResourceRow {
            service,
            attributes: json::attributes(&mut attrs),
        });
        for ss in rs.scope_spans {
            let (scope_name, scope_version) =
                ss.scope.map(|s| (s.name, s.version)).unwrap_or_default();
            for (si, span) in ss.spans.into_iter().enumerate() {
                match row(span, &scope_name, &scope_version) {
                    Ok(row) => out.batch.spans.push((resource, row)),
                    Err(why) => {
                        out.rejected += 1;
                        out.first_reject
                            .get_or_insert_with(|| format!("resource {ri}, span {si}: {why}"));
                    }
                }
            }
        }
    }
    out
}

fn row(mut s: Span, scope_name: &str, scope_version: &str) -> Result<SpanRow, String> {
    let parent_span_id = match s.parent_span_id.len() {
        0 => None,
        _ if s.parent_span_id.iter().all(|&b| b == 0) => None,
        _ => Some(id(&s.parent_span_id, 8, "parent_span_id")?),
    };
    let status = s.status.unwrap_or_default();
    Ok(SpanRow {
        trace_id: id(&s.trace_id, 16, "trace_id")?,
        span_id: id(&s.span_id, 8, "span_id")?,
        parent_span_id,
        trace_state: s.trace_state,
        flags: s.flags,
        name: s.name,
        kind: s.kind,
        start_ns: time(s.start_time_unix_nano, "start")?,
        end_ns: time(s.end_time_unix_nano, "end")?,
        scope_name: scope_name.to_owned(),
        scope_version: scope_version.to_owned(),
        attributes: json::attributes(&mut s.attributes),
        events: json::events(&mut s.events),
        links: json::links(&mut s.links),
        status_code: status.code,
        status_message: status.message,
        dropped_attributes: s.dropped_attributes_count,
        dropped_events: s.dropped_events_count,
        dropped_links: s.dropped_links_count,
    })
}

/// A non-zero id of `len` bytes, as lowercase hex.
fn id(bytes: &[u8], len: usize, what: &str) -> Result<String, String> {
    if bytes.len() != len {
        return Err(format!("{what} has {} bytes, want {len}", bytes.len()));
    }
    if bytes.iter().all(|&b| b == 0) {
        return Err(format!("{what} is all zeros"));
    }
    Ok(const_hex::encode(bytes))
}

fn time(ns: u64, what: &str) -> Result<i64, String> {
    i64::try_from(ns).map_err(|_| format!("{what} time {ns} ns is past the year 2262"))
}
