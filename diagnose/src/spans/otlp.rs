//! OTLP JSON: `resourceSpans[].resource.attributes` name the service and
//! host; `scopeSpans[].spans[]` (or the older `instrumentationLibrarySpans`)
//! hold hex ids, an integer `kind` and nanos as strings or numbers.

use super::{accept, int, Endpoint, Kind, Parsed, Span};
use serde_json::Value;

pub(super) fn read(doc: &Value, out: &mut Parsed) {
    let Some(resources) = doc
        .get("resourceSpans")
        .or_else(|| doc.get("resource_spans"))
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
                    trace_id: span.get("traceId")?.as_str()?.to_ascii_lowercase(),
                    span_id: span.get("spanId")?.as_str()?.to_ascii_lowercase(),
                    parent_id: span
                        .get("parentSpanId")
                        .and_then(Value::as_str)
                        .filter(|p| !p.is_empty())
                        .map(str::to_ascii_lowercase),
                    service: service.clone(),
                    kind,
                    start_ns: int(span.get("startTimeUnixNano"))?,
                    end_ns: int(span.get("endTimeUnixNano"))?,
                    endpoint,
                    shared: false,
                })
            })();
            accept(out, s, "missing id or timestamps");
        }
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
