//! OTLP JSON: `resourceSpans[].resource.attributes` name the service and
//! host; `scopeSpans[].spans[]` (or the older `instrumentationLibrarySpans`)
//! hold hex ids, an integer `kind` and nanos as strings or numbers. Trace
//! stores' APIs answer with the same in a wrapper, ids in base64 as
//! protobuf's own JSON mapping writes bytes: Grafana Tempo's under
//! `batches` (v1) or `trace.resourceSpans` (v2), Jaeger's API v3 under
//! `result.resourceSpans`.

use super::{accept, failed_status, int, Endpoint, Kind, Parsed, Span};
use serde_json::Value;

pub(super) fn read(doc: &Value, out: &mut Parsed) {
    let doc = super::unwrapped(doc);
    let Some(resources) = ["resourceSpans", "resource_spans", "batches"]
        .iter()
        .find_map(|k| doc.get(k))
        .and_then(Value::as_array)
    else {
        out.rejects.add("no resourceSpans array");
        return;
    };
    for rs in resources {
        let attrs = rs.pointer("/resource/attributes");
        let service = values(attrs, "service.name")
            .into_iter()
            .next()
            .unwrap_or_default();
        let scopes = rs
            .get("scopeSpans")
            .or_else(|| rs.get("instrumentationLibrarySpans"))
            .and_then(Value::as_array);
        for span in scopes
            .into_iter()
            .flatten()
            .filter_map(|s| s.get("spans")?.as_array())
            .flatten()
        {
            let kind = kind(span.get("kind"));
            let endpoint = Endpoint::read(
                kind.side(),
                |k| values(attrs, k),
                |k| values(span.get("attributes"), k),
            );
            let s = (|| {
                Some(Span {
                    trace_id: id(span.get("traceId")?.as_str()?),
                    span_id: id(span.get("spanId")?.as_str()?),
                    parent_id: span
                        .get("parentSpanId")
                        .and_then(Value::as_str)
                        .filter(|p| !p.is_empty())
                        .map(id),
                    service: service.clone(),
                    kind,
                    start_ns: int(span.get("startTimeUnixNano"))?,
                    end_ns: int(span.get("endTimeUnixNano"))?,
                    endpoint,
                    shared: false,
                    error: failed(span.pointer("/status/code")),
                })
            })();
            accept(out, s, "missing id or timestamps");
        }
    }
}

/// A trace or span id as lowercase hex: OTLP JSON's hex as it is, or
/// base64 (Tempo) decoded; anything else kept as given, so that ids that
/// differ stay different.
fn id(text: &str) -> String {
    use base64::Engine;
    if text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return text.to_ascii_lowercase();
    }
    match base64::engine::general_purpose::STANDARD.decode(text) {
        Ok(bytes) if matches!(bytes.len(), 8 | 16) => const_hex::encode(bytes),
        _ => text.to_owned(),
    }
}

/// Whether a `status.code` (a number, or the enum's name as protobuf's
/// JSON mapping writes it) is `STATUS_CODE_ERROR`.
fn failed(code: Option<&Value>) -> bool {
    match code {
        Some(Value::Number(n)) => n.as_i64() == Some(2),
        Some(Value::String(s)) => failed_status(s),
        _ => false,
    }
}

/// A span's kind, as a number or a name.
fn kind(v: Option<&Value>) -> Kind {
    match v {
        Some(Value::Number(n)) => n.as_i64().map_or(Kind::Other, kind_code),
        Some(Value::String(s)) => Kind::named(s),
        _ => Kind::Other,
    }
}

/// An OTLP `SpanKind` number.
pub(super) fn kind_code(code: i64) -> Kind {
    match code {
        2 => Kind::Server,
        3 => Kind::Client,
        4 => Kind::Producer,
        5 => Kind::Consumer,
        _ => Kind::Other,
    }
}

/// The string values of an attribute of an OTLP `[{key, value}]` list: a
/// `stringValue`, an `intValue` as text (a port), or every string of an
/// `arrayValue`.
fn values(attrs: Option<&Value>, key: &str) -> Vec<String> {
    let Some(v) = attrs
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .find(|a| a.get("key").and_then(Value::as_str) == Some(key))
        })
        .and_then(|a| a.get("value"))
    else {
        return Vec::new();
    };
    if let Some(s) = v.get("stringValue").and_then(Value::as_str) {
        return vec![s.to_owned()];
    }
    if let Some(n) = int(v.get("intValue")) {
        return vec![n.to_string()];
    }
    v.pointer("/arrayValue/values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|x| x.get("stringValue")?.as_str().map(str::to_owned))
        .collect()
}
