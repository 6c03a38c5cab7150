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
    pub kind: SpanKind,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The worker that ran it, recorded as `thread.id`.
    pub thread: Option<u32>,
    /// A client span's callee as its instrumentation names it: the host
    /// (`server.address`, its address) and the service's port
    /// (`server.port`).
    pub peer: Option<(u16, u16)>,
}

/// What a span records, numbered as OTLP's `SpanKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Internal = 1,
    Server = 2,
    Client = 3,
}

/// `spans` as a web framework's instrumentation records them (Express's
/// request handler, a Spring controller, a span a team adds by hand): an
/// INTERNAL span under each server span that makes calls, and those calls
/// its children rather than the server span's. The timing is the same; a
/// diagnosis that takes a call's parent for the caller's server span
/// would lose who waited on whom.
pub fn with_handler_spans(spans: &[OutSpan]) -> Vec<OutSpan> {
    let parents: std::collections::HashSet<&str> = (spans.iter())
        .filter(|s| s.kind == SpanKind::Client)
        .filter_map(|s| s.parent_id.as_deref())
        .collect();
    let mut out = Vec::with_capacity(spans.len() * 2);
    for s in spans {
        let mut s = s.clone();
        if s.kind == SpanKind::Client {
            s.parent_id = s.parent_id.map(|p| handler_id(&p));
        }
        out.push(s);
    }
    for s in spans.iter().filter(|s| s.kind == SpanKind::Server) {
        if parents.contains(s.span_id.as_str()) {
            out.push(OutSpan {
                span_id: handler_id(&s.span_id),
                parent_id: Some(s.span_id.clone()),
                name: format!("request handler {}", s.service),
                kind: SpanKind::Internal,
                ..s.clone()
            });
        }
    }
    out
}

/// The handler span's id under server span `id`: the id with its first
/// hex digit's top bit flipped, as unlikely to meet another span's id as
/// two of the generator's random ids are.
fn handler_id(id: &str) -> String {
    let mut digits = id.to_owned();
    if let Some(d) = id.get(..1).and_then(|d| u8::from_str_radix(d, 16).ok()) {
        digits.replace_range(..1, &format!("{:x}", d ^ 0x8));
    }
    digits
}

/// The OTLP document; `hosts[i]` is host `i`'s name and address.
pub fn document(spans: &[OutSpan], hosts: &[(String, Ipv4Addr)]) -> Value {
    let mut by: BTreeMap<(&str, u16), Vec<Value>> = BTreeMap::new();
    for s in spans {
        let mut v = json!({
            "traceId": s.trace_id,
            "spanId": s.span_id,
            "name": s.name,
            "kind": s.kind as u8,
            "startTimeUnixNano": s.start_ns.to_string(),
            "endTimeUnixNano": s.end_ns.to_string(),
        });
        if let Some(p) = &s.parent_id {
            v["parentSpanId"] = json!(p);
        }
        let mut attributes = Vec::new();
        if let Some(t) = s.thread {
            attributes.push(json!({ "key": "thread.id", "value": { "intValue": t.to_string() } }));
        }
        if let Some((host, port)) = s.peer {
            let address = hosts[host as usize].1.to_string();
            attributes
                .push(json!({ "key": "server.address", "value": { "stringValue": address } }));
            attributes
                .push(json!({ "key": "server.port", "value": { "intValue": port.to_string() } }));
        }
        if !attributes.is_empty() {
            v["attributes"] = json!(attributes);
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
