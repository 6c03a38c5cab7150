//! Synthetic spans written as one OTLP JSON document, one resource per
//! service instance, as an OpenTelemetry SDK's file exporter would.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// A span as the generator records it, on its host's clock.
#[derive(Debug, Clone)]
pub struct OutSpan {
    pub trace_id: String,
    pub span_id: String,
    pub parent_id: Option<String>,
    pub service: &'static str,
    pub name: String,
    pub host: u16,
    pub server: bool,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// The OTLP document; `hosts[i]` is host `i`'s name and address.
pub fn document(spans: &[OutSpan], hosts: &[(String, Ipv4Addr)]) -> Value {
    let mut by: BTreeMap<(&str, u16), Vec<Value>> = BTreeMap::new();
    for s in spans {
        let mut v = json!({
            "traceId": s.trace_id,
            "spanId": s.span_id,
            "name": s.name,
            "kind": if s.server { 2 } else { 3 },
            "startTimeUnixNano": s.start_ns.to_string(),
            "endTimeUnixNano": s.end_ns.to_string(),
        });
        if let Some(p) = &s.parent_id {
            v["parentSpanId"] = json!(p);
        }
        by.entry((s.service, s.host)).or_default().push(v);
    }
    let resources: Vec<Value> = by
        .into_iter()
        .map(|((service, host), spans)| {
            let (name, ip) = &hosts[host as usize];
            json!({
                "resource": { "attributes": [
                    { "key": "service.name", "value": { "stringValue": service } },
                    { "key": "host.name", "value": { "stringValue": name } },
                    { "key": "host.ip", "value": { "stringValue": ip.to_string() } },
                ]},
                "scopeSpans": [{ "scope": { "name": "intpath-synth" }, "spans": spans }],
            })
        })
        .collect();
    json!({ "resourceSpans": resources })
}
