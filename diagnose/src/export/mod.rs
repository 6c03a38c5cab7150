//! The diagnosis handed back to the tools people read traces in: the spans
//! that were diagnosed, as one OTLP export request, each RPC's client and
//! server span carrying what the diagnosis found (`intpath.*` attributes)
//! and, where network evidence explains the call's excess, a span event
//! saying which link and how much. Jaeger or Tempo then show it beside the
//! request. Building the request is pure; [`send`] posts it over OTLP/HTTP
//! in batches (what `intpath diagnose --export-otlp` and the receiver's
//! continuous export share).

mod send;

pub use send::{batches, Batch, Client, Endpoint, ExportError, Sent, SPANS_PER_REQUEST};

use crate::attribution::Verdict;
use crate::report;
use crate::spans::{Kind, Side, Span};
use crate::Diagnosis;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value, AnyValue, ArrayValue, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event, SpanKind};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span as OtlpSpan};
use std::collections::{BTreeMap, HashMap};

/// The name of the span event that says network evidence explains a call.
pub const EVIDENCE_EVENT: &str = "intpath.network_evidence";

/// The request, and how many spans were left out because their ids are not
/// the hexadecimal OTLP needs (16 bytes of trace, 8 of span id).
#[derive(Debug, Clone)]
pub struct Export {
    pub request: ExportTraceServiceRequest,
    pub spans: usize,
    pub skipped: usize,
}

/// `spans` (what [`crate::load`] read for `d`) with `d`'s findings.
pub fn otlp(d: &Diagnosis, spans: &[Span]) -> Export {
    otlp_of(d, spans, |_| true)
}

/// The spans of `spans` that `keep` picks, with `d`'s findings; the others
/// only lend their ids (a client span finds its call through the server
/// span that names it as parent, sent or not).
pub fn otlp_of(d: &Diagnosis, spans: &[Span], keep: impl Fn(&Span) -> bool) -> Export {
    // Each edge's server span, and the client span its server span names
    // as parent.
    let mut edge_of: HashMap<(&str, &str), usize> = HashMap::new();
    let by_id: HashMap<(&str, &str), &Span> = spans
        .iter()
        .map(|s| ((s.trace_id.as_str(), s.span_id.as_str()), s))
        .collect();
    for (i, e) in d.edges.iter().enumerate() {
        let trace = d.traces[e.trace as usize].as_str();
        edge_of.insert((trace, e.server_span.as_str()), i);
        let parent = by_id
            .get(&(trace, e.server_span.as_str()))
            .and_then(|s| s.parent_id.as_deref());
        if let Some(p) = parent {
            edge_of.entry((trace, p)).or_insert(i);
        }
    }
    let mut by_service: BTreeMap<&str, Vec<OtlpSpan>> = BTreeMap::new();
    let (mut skipped, mut kept) = (0, 0);
    for s in spans.iter().filter(|s| keep(s)) {
        kept += 1;
        let edge = edge_of
            .get(&(s.trace_id.as_str(), s.span_id.as_str()))
            .copied();
        match span(d, s, edge) {
            Some(o) => by_service.entry(s.service.as_str()).or_default().push(o),
            None => skipped += 1,
        }
    }
    let resource_spans = by_service
        .into_iter()
        .map(|(service, spans)| ResourceSpans {
            resource: Some(Resource {
                attributes: vec![kv("service.name", string(service))],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "intpath-diagnose".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                spans,
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        })
        .collect();
    Export {
        request: ExportTraceServiceRequest { resource_spans },
        spans: kept - skipped,
        skipped,
    }
}

/// One span, with the findings of `edge` when it is one of an RPC's two.
fn span(d: &Diagnosis, s: &Span, edge: Option<usize>) -> Option<OtlpSpan> {
    let trace_id = const_hex::decode(&s.trace_id)
        .ok()
        .filter(|b| b.len() == 16)?;
    let span_id = const_hex::decode(&s.span_id)
        .ok()
        .filter(|b| b.len() == 8)?;
    let parent_span_id = match &s.parent_id {
        Some(p) => const_hex::decode(p).ok().filter(|b| b.len() == 8)?,
        None => Vec::new(),
    };
    let mut attributes = Vec::new();
    let mut events = Vec::new();
    let mut name = s.service.clone();
    if let Some(i) = edge {
        let (e, a) = (&d.edges[i], &d.attr[i]);
        let (caller, callee) = (
            &d.services[e.caller as usize],
            &d.services[e.callee as usize],
        );
        name = format!("{caller} → {callee}");
        let verdict = a.verdict();
        attributes.extend([
            kv("intpath.blame", string(verdict.name())),
            kv("intpath.network_ms", double(ms(e.network() as f64))),
            kv("intpath.queueing_ms", double(ms(a.queue_fwd + a.queue_rev))),
            kv("intpath.excess_ms", double(ms(a.excess))),
            kv("intpath.slow", any(any_value::Value::BoolValue(a.slow))),
        ]);
        let culprit = report::blamed(d, e, a);
        if !culprit.is_empty() {
            attributes.push(kv("intpath.culprit", string(&culprit)));
        }
        if let Some(p) = &d.paths[i] {
            let names = |ls: &[u32]| ls.iter().map(|&l| d.index.name(l)).collect::<Vec<_>>();
            attributes.push(kv("intpath.links.forward", strings(names(&p.forward))));
            attributes.push(kv("intpath.links.reverse", strings(names(&p.reverse))));
        }
        if matches!(verdict, Verdict::Network | Verdict::Loss) {
            events.push(Event {
                time_unix_nano: s.start_ns.max(0) as u64,
                name: EVIDENCE_EVENT.into(),
                attributes: vec![
                    kv("intpath.link", string(&culprit)),
                    kv("intpath.fabric_ms", double(ms(a.fabric))),
                    kv("intpath.fabric_lo_ms", double(ms(a.fabric_lo))),
                    kv("intpath.fabric_hi_ms", double(ms(a.fabric_hi))),
                    kv("intpath.loss_ms", double(ms(a.loss))),
                    kv("intpath.confidence", double(f64::from(a.confidence))),
                ],
                dropped_attributes_count: 0,
            });
        }
    }
    if let Some(peer) = s.endpoint.peer {
        let key = match s.kind.side() {
            Side::Client => "server.address",
            _ => "client.address",
        };
        attributes.push(kv(key, string(&peer.to_string())));
    }
    if let Some(ip) = s.endpoint.ips.first() {
        attributes.push(kv("host.ip", string(&ip.to_string())));
    }
    Some(OtlpSpan {
        trace_id,
        span_id,
        parent_span_id,
        name,
        kind: match s.kind {
            Kind::Client => SpanKind::Client,
            Kind::Server => SpanKind::Server,
            Kind::Producer => SpanKind::Producer,
            Kind::Consumer => SpanKind::Consumer,
            Kind::Other => SpanKind::Internal,
        } as i32,
        start_time_unix_nano: s.start_ns.max(0) as u64,
        end_time_unix_nano: s.end_ns.max(0) as u64,
        attributes,
        events,
        ..Default::default()
    })
}

fn ms(ns: f64) -> f64 {
    (ns / 1e3).round() / 1e3
}

fn any(v: any_value::Value) -> AnyValue {
    AnyValue { value: Some(v) }
}

fn kv(key: &str, value: AnyValue) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(value),
        ..Default::default()
    }
}

fn string(s: &str) -> AnyValue {
    any(any_value::Value::StringValue(s.to_owned()))
}

fn double(x: f64) -> AnyValue {
    any(any_value::Value::DoubleValue(x))
}

fn strings(v: Vec<String>) -> AnyValue {
    any(any_value::Value::ArrayValue(ArrayValue {
        values: v.iter().map(|s| string(s)).collect(),
    }))
}
