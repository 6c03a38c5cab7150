//! The SDKs' console exporters, what a user has who printed spans to a log
//! before setting up any collector: Python's `ConsoleSpanExporter` (one
//! indented object a span; `context.trace_id` as `0x…` hex, `kind` as
//! `SpanKind.SERVER`, ISO 8601 times, attributes as a JSON object) and Go's
//! `stdouttrace` (one object a span; `SpanContext`, `Parent`, `SpanKind` as
//! OTLP's number, RFC 3339 times with the zone, attributes as
//! `[{Key, Value: {Type, Value}}]`). Either may also come as an array.
//! Their times are wall-clock text: Python's to the microsecond, Go's to
//! the nanosecond.

use super::{accept, failed_status, otlp::kind_code, Endpoint, Kind, Parsed, Span};
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Whether `doc` (or its first element) is a console exporter's span.
pub(super) fn is_console(doc: &Value) -> bool {
    let first = doc.as_array().and_then(|a| a.first()).unwrap_or(doc);
    first.pointer("/context/span_id").is_some() || first.pointer("/SpanContext/SpanID").is_some()
}

pub(super) fn read(doc: &Value, out: &mut Parsed) {
    for span in doc
        .as_array()
        .map_or(std::slice::from_ref(doc), Vec::as_slice)
    {
        let fields = if span.get("SpanContext").is_some() {
            go(span)
        } else {
            python(span)
        };
        accept(
            out,
            fields.and_then(Fields::span),
            "missing id or timestamps",
        );
    }
}

/// Where a Python SDK span (`ReadableSpan.to_json`) keeps its fields.
fn python(span: &Value) -> Option<Fields<'_>> {
    Some(Fields {
        trace: span.pointer("/context/trace_id")?.as_str()?,
        span: span.pointer("/context/span_id")?.as_str()?,
        parent: span.get("parent_id").and_then(Value::as_str),
        kind: span
            .get("kind")
            .and_then(Value::as_str)
            .map_or(Kind::Other, |k| {
                Kind::named(k.strip_prefix("SpanKind.").unwrap_or(k))
            }),
        times: [span.get("start_time")?, span.get("end_time")?],
        resource: Attrs::Object(span.pointer("/resource/attributes")),
        attrs: Attrs::Object(span.get("attributes")),
        status: span.pointer("/status/status_code").and_then(Value::as_str),
    })
}

/// Where a Go SDK span (`tracetest.SpanStub` as JSON) keeps its fields. A
/// root's `Parent` holds zeros.
fn go(span: &Value) -> Option<Fields<'_>> {
    Some(Fields {
        trace: span.pointer("/SpanContext/TraceID")?.as_str()?,
        span: span.pointer("/SpanContext/SpanID")?.as_str()?,
        parent: span
            .pointer("/Parent/SpanID")
            .and_then(Value::as_str)
            .filter(|p| p.bytes().any(|b| b != b'0')),
        kind: span
            .get("SpanKind")
            .and_then(Value::as_i64)
            .map_or(Kind::Other, kind_code),
        times: [span.get("StartTime")?, span.get("EndTime")?],
        resource: Attrs::KeyValues(span.get("Resource")),
        attrs: Attrs::KeyValues(span.get("Attributes")),
        status: span.pointer("/Status/Code").and_then(Value::as_str),
    })
}

/// A console span's fields as its SDK wrote them.
struct Fields<'a> {
    trace: &'a str,
    span: &'a str,
    parent: Option<&'a str>,
    kind: Kind,
    times: [&'a Value; 2],
    resource: Attrs<'a>,
    attrs: Attrs<'a>,
    /// `ERROR` (Python), `Error` (Go), or unset and OK.
    status: Option<&'a str>,
}

impl Fields<'_> {
    fn span(self) -> Option<Span> {
        let [start, end] = self.times;
        let (resource, attrs) = (self.resource, self.attrs);
        Some(Span {
            trace_id: hex(self.trace),
            span_id: hex(self.span),
            parent_id: self.parent.map(hex),
            service: resource
                .values("service.name")
                .into_iter()
                .next()
                .unwrap_or_default(),
            kind: self.kind,
            start_ns: nanos(start)?,
            end_ns: nanos(end)?,
            endpoint: Endpoint::read(
                self.kind.side(),
                |k| resource.values(k),
                |k| attrs.values(k),
            ),
            shared: false,
            error: self.status.is_some_and(failed_status),
        })
    }
}

/// Attributes as each SDK writes them.
#[derive(Clone, Copy)]
enum Attrs<'a> {
    /// Python: `{"host.ip": ["10.0.0.5"], "server.port": 8080}`.
    Object(Option<&'a Value>),
    /// Go: `[{"Key": …, "Value": {"Type": …, "Value": …}}]`.
    KeyValues(Option<&'a Value>),
}

impl Attrs<'_> {
    /// The attribute's string values: a scalar's text, an array's elements'.
    fn values(self, key: &str) -> Vec<String> {
        let value = match self {
            Attrs::Object(attrs) => attrs.and_then(|a| a.get(key)),
            Attrs::KeyValues(attrs) => attrs
                .and_then(Value::as_array)
                .and_then(|a| {
                    a.iter()
                        .find(|kv| kv.get("Key").and_then(Value::as_str) == Some(key))
                })
                .and_then(|kv| kv.pointer("/Value/Value")),
        };
        value.map_or(Vec::new(), texts)
    }
}

/// An id as lowercase hex without Python's `0x`.
fn hex(text: &str) -> String {
    text.strip_prefix("0x").unwrap_or(text).to_ascii_lowercase()
}

/// Nanoseconds since the epoch of an RFC 3339 time.
fn nanos(v: &Value) -> Option<i64> {
    let t = OffsetDateTime::parse(v.as_str()?, &Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos()).ok()
}

/// A scalar as its text (a port is a number), an array as its elements'.
fn texts(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Number(n) => vec![n.to_string()],
        Value::Array(a) => a.iter().flat_map(texts).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_keep_their_zone_and_fraction() {
        let utc = nanos(&"2026-11-29T01:53:36.221129Z".into()).unwrap();
        assert_eq!(utc % 1_000_000_000, 221_129_000);
        let zoned = nanos(&"2026-11-29T02:53:36.221129001+01:00".into()).unwrap();
        assert_eq!(zoned - utc, 1);
        assert_eq!(nanos(&"yesterday".into()), None);
    }
}
