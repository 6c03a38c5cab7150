//! Spans the collector's OTLP receiver stored (`store::spans`): rows already
//! checked and hex-encoded there, so only the attributes that name the
//! service and the two ends are read here, with the same keys as OTLP files.

use super::endpoint::Endpoint;
use super::otlp::kind_code;
use super::{accept, Parsed, Span};
use intpath_store::spans::StoredSpans;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// A stored attribute object's string values for `key`: a string, an
/// integer as text (a port), or the strings of an array (`host.ip` is an
/// array in the conventions).
fn values(attrs: &Map<String, Value>, key: &str) -> Vec<String> {
    match attrs.get(key) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => vec![n.to_string()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

pub fn from_store(stored: &StoredSpans) -> Parsed {
    let resources: HashMap<i64, (String, Map<String, Value>)> = stored
        .resources
        .iter()
        .map(|(id, r)| {
            let attrs = serde_json::from_str(&r.attributes).unwrap_or_default();
            (*id, (r.service.clone(), attrs))
        })
        .collect();
    let mut out = Parsed::default();
    for s in &stored.spans {
        let row = &s.span;
        let span = resources.get(&s.resource_id).map(|(service, res)| {
            let attrs: Map<String, Value> =
                serde_json::from_str(&row.attributes).unwrap_or_default();
            let kind = kind_code(i64::from(row.kind));
            Span {
                trace_id: row.trace_id.clone(),
                span_id: row.span_id.clone(),
                parent_id: row.parent_span_id.clone(),
                service: service.clone(),
                kind,
                start_ns: row.start_ns,
                end_ns: row.end_ns,
                endpoint: Endpoint::read(kind.side(), |k| values(res, k), |k| values(&attrs, k)),
                shared: false,
                // OTLP's STATUS_CODE_ERROR, as the receiver stored it.
                error: row.status_code == 2,
            }
        });
        accept(&mut out, span, "stored span without its resource");
    }
    super::unkinded::infer(&mut out.spans);
    out
}
