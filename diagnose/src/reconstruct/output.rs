//! The reconstructed traces as one OTLP JSON document: every span of an
//! RPC that was kept, parents filled in, trace ids those of the inferred
//! roots, and what was inferred marked with `intpath.inferred`,
//! `intpath.confidence` and, on each request, `intpath.alternatives`.

use super::model::{Rpcs, Side};
use super::Reconstruction;
use crate::spans::{Kind, Span};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub fn document(spans: &[Span], rpcs: &Rpcs, rec: &Reconstruction) -> Value {
    let id = |s: Side| spans[s.span].span_id.as_str();
    let traces = root_traces(spans, rpcs, rec);
    let mut by: BTreeMap<(String, String, String), Vec<Value>> = BTreeMap::new();
    for (i, r) in rpcs.rpcs.iter().enumerate() {
        let trace = &traces[i];
        let parent_rpc = rec.parent[i].map(|p| &rpcs.rpcs[p as usize]);
        let alts: Vec<String> = rec.alternatives[i]
            .iter()
            .map(|(calls, p)| {
                let ids: Vec<&str> = calls
                    .iter()
                    .filter_map(|&c| {
                        let c = &rpcs.rpcs[c as usize];
                        c.server.or(c.client).map(id)
                    })
                    .collect();
                format!("{p:.3}:{}", ids.join(","))
            })
            .collect();
        for (side, kind) in [(r.client, Kind::Client), (r.server, Kind::Server)] {
            let Some(side) = side else { continue };
            let s = &spans[side.span];
            let mut attrs = Vec::new();
            let parent = match (kind, r.client.is_some()) {
                // The client span, or a server span whose caller is hidden,
                // gets the inferred parent.
                (Kind::Client, _) | (_, false) => {
                    if r.caller.is_some() {
                        attrs
                            .push(json!({"key": "intpath.inferred", "value": {"boolValue": true}}));
                        attrs.push(json!({"key": "intpath.confidence", "value": {"doubleValue": rec.confidence[i]}}));
                    }
                    parent_rpc.and_then(|p| p.server.or(p.client)).map(id)
                }
                _ => r.client.map(id),
            };
            if kind == Kind::Server && !alts.is_empty() {
                attrs.push(json!({"key": "intpath.alternatives", "value": {"stringValue": alts.join(";")}}));
            }
            let mut v = json!({
                "traceId": trace,
                "spanId": s.span_id,
                "name": s.service,
                "kind": if kind == Kind::Server { 2 } else { 3 },
                "startTimeUnixNano": s.start_ns.to_string(),
                "endTimeUnixNano": s.end_ns.to_string(),
                "attributes": attrs,
            });
            if let Some(p) = parent {
                v["parentSpanId"] = json!(p);
            }
            let ip = s
                .endpoint
                .ips
                .first()
                .map(|ip| ip.to_string())
                .unwrap_or_default();
            let host = s.endpoint.hostname.clone().unwrap_or_default();
            by.entry((s.service.clone(), host, ip)).or_default().push(v);
        }
    }
    let resources: Vec<Value> = by
        .into_iter()
        .map(|((service, host, ip), spans)| {
            let mut attrs = vec![json!({"key": "service.name", "value": {"stringValue": service}})];
            if !host.is_empty() {
                attrs.push(json!({"key": "host.name", "value": {"stringValue": host}}));
            }
            if !ip.is_empty() {
                attrs.push(json!({"key": "host.ip", "value": {"stringValue": ip}}));
            }
            json!({
                "resource": {"attributes": attrs},
                "scopeSpans": [{"scope": {"name": "intpath-reconstruct"}, "spans": spans}],
            })
        })
        .collect();
    json!({ "resourceSpans": resources })
}

/// Each RPC's trace id: the one its inferred root's span carries.
fn root_traces<'a>(spans: &'a [Span], rpcs: &Rpcs, rec: &Reconstruction) -> Vec<&'a str> {
    let n = rpcs.rpcs.len();
    (0..n)
        .map(|i| {
            let mut r = i;
            for _ in 0..n {
                match rec.parent[r] {
                    Some(p) => r = p as usize,
                    None => break,
                }
            }
            let rpc = &rpcs.rpcs[r];
            rpc.server
                .or(rpc.client)
                .map_or("", |s| spans[s.span].trace_id.as_str())
        })
        .collect()
}
