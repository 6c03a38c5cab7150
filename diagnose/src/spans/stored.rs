//! Spans the collector's OTLP receiver stored (`store::spans`): rows already
//! checked and hex-encoded there, so only the resource attributes that name
//! the service and host are read here, with the same keys as OTLP files.

use super::otlp::{kind_code, HOST_IP_KEYS};
use super::{accept, Parsed, Span};
use intpath_store::spans::StoredSpans;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::net::Ipv4Addr;

/// Who recorded a resource's spans.
struct Origin {
    service: String,
    ip: Option<Ipv4Addr>,
    hostname: Option<String>,
}

pub fn from_store(stored: &StoredSpans) -> Parsed {
    let origins: HashMap<i64, Origin> = stored
        .resources
        .iter()
        .map(|(id, r)| {
            let attrs: Map<String, Value> = serde_json::from_str(&r.attributes).unwrap_or_default();
            let text = |k: &str| attrs.get(k).and_then(Value::as_str).map(str::to_owned);
            let origin = Origin {
                service: r.service.clone(),
                ip: HOST_IP_KEYS
                    .iter()
                    .find_map(|k| text(k))
                    .and_then(|s| s.parse().ok()),
                hostname: text("host.name"),
            };
            (*id, origin)
        })
        .collect();
    let mut out = Parsed::default();
    for s in &stored.spans {
        let row = &s.span;
        let span = origins.get(&s.resource_id).map(|o| Span {
            trace_id: row.trace_id.clone(),
            span_id: row.span_id.clone(),
            parent_id: row.parent_span_id.clone(),
            service: o.service.clone(),
            kind: kind_code(i64::from(row.kind)),
            start_ns: row.start_ns,
            end_ns: row.end_ns,
            ip: o.ip,
            hostname: o.hostname.clone(),
            shared: false,
        });
        accept(&mut out, span, "stored span without its resource");
    }
    out
}
