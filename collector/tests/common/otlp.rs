//! OTLP export requests with every kind of field, the rows they must become,
//! and a receiver to send them to: shared by the OTLP receiver's tests.

use intpath_collector::otlp::{Config, Receiver};
use intpath_store::spans::{SpanRow, StoredSpans};
use intpath_store::Db;
use intpath_store::Store;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value as V, AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span, Status};
use serde_json::json;

pub const PROTO: &str = "application/x-protobuf";
pub const JSON: &str = "application/json";
pub const T0: u64 = 1_700_000_000_123_456_789;

pub fn kv(key: &str, v: V) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(v) }),
        ..Default::default()
    }
}

pub fn trace_id(seed: u8) -> Vec<u8> {
    (1..=16).map(|i| i * 3 + seed).collect()
}

/// A server span with every kind of attribute, an event and an error
/// status, and its client child with a link; `seed` makes the ids unique.
pub fn request(seed: u8) -> ExportTraceServiceRequest {
    let parent = Span {
        trace_id: trace_id(seed),
        span_id: vec![seed, 1, 2, 3, 4, 5, 6, 7],
        trace_state: "vendor=a".into(),
        flags: 1,
        name: "GET /hotels".into(),
        kind: 2,
        start_time_unix_nano: T0,
        end_time_unix_nano: T0 + 5_000_000,
        attributes: vec![
            kv("route", V::StringValue("/hotels".into())),
            kv("status", V::IntValue(200)),
            kv("ratio", V::DoubleValue(0.5)),
            kv("cached", V::BoolValue(true)),
            kv(
                "arr",
                V::ArrayValue(ArrayValue {
                    values: vec![
                        AnyValue {
                            value: Some(V::IntValue(1)),
                        },
                        AnyValue {
                            value: Some(V::StringValue("two".into())),
                        },
                    ],
                }),
            ),
            kv(
                "kv",
                V::KvlistValue(KeyValueList {
                    values: vec![kv("inner", V::StringValue("x".into()))],
                }),
            ),
            kv("raw", V::BytesValue(vec![1, 2, 3])),
        ],
        dropped_attributes_count: 2,
        events: vec![span::Event {
            time_unix_nano: T0 + 1_000,
            name: "retry".into(),
            attributes: vec![kv("attempt", V::IntValue(2))],
            dropped_attributes_count: 0,
        }],
        dropped_events_count: 1,
        status: Some(Status {
            message: "boom".into(),
            code: 2,
        }),
        ..Default::default()
    };
    let child = Span {
        trace_id: trace_id(seed),
        span_id: vec![seed, 9, 9, 9, 9, 9, 9, 9],
        parent_span_id: parent.span_id.clone(),
        name: "search.Nearby".into(),
        kind: 3,
        start_time_unix_nano: T0 + 1_000_000,
        end_time_unix_nano: T0 + 4_000_000,
        links: vec![span::Link {
            trace_id: trace_id(seed + 100),
            span_id: vec![7; 8],
            trace_state: String::new(),
            attributes: vec![kv("why", V::StringValue("batch".into()))],
            ..Default::default()
        }],
        dropped_links_count: 3,
        ..Default::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    kv("service.name", V::StringValue("frontend".into())),
                    kv("host.name", V::StringValue("h1".into())),
                ],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "intpath-test".into(),
                    version: "1.2".into(),
                    ..Default::default()
                }),
                spans: vec![parent, child],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// Request `n` of sender `tag`: `spans` spans like [`request`]'s first,
/// with ids of their own.
pub fn numbered(tag: u8, n: u32, spans: u32) -> ExportTraceServiceRequest {
    let mut req = request(0);
    let rs = &mut req.resource_spans[0].scope_spans[0];
    let template = rs.spans[0].clone();
    rs.spans = (0..spans)
        .map(|i| {
            let mut s = template.clone();
            s.trace_id[..4].copy_from_slice(&n.to_be_bytes());
            s.trace_id[4] = tag;
            s.span_id[..4].copy_from_slice(&i.to_be_bytes());
            s
        })
        .collect();
    req
}

/// [`request`] as an OTLP/JSON document written out by hand, as the
/// specification's JSON encoding has it (hex ids, decimal-string nanos and
/// int64s), not as our serializer would make it.
pub fn request_json(seed: u8) -> Vec<u8> {
    let tid = hex(&trace_id(seed));
    let pid = hex(&[seed, 1, 2, 3, 4, 5, 6, 7]);
    let doc = json!({ "resourceSpans": [{
        "resource": { "attributes": [
            { "key": "service.name", "value": { "stringValue": "frontend" } },
            { "key": "host.name", "value": { "stringValue": "h1" } } ] },
        "scopeSpans": [{
            "scope": { "name": "intpath-test", "version": "1.2" },
            "spans": [{
                "traceId": tid, "spanId": pid, "traceState": "vendor=a", "flags": 1,
                "name": "GET /hotels", "kind": 2,
                "startTimeUnixNano": T0.to_string(),
                "endTimeUnixNano": (T0 + 5_000_000).to_string(),
                "attributes": [
                    { "key": "route", "value": { "stringValue": "/hotels" } },
                    { "key": "status", "value": { "intValue": "200" } },
                    { "key": "ratio", "value": { "doubleValue": 0.5 } },
                    { "key": "cached", "value": { "boolValue": true } },
                    { "key": "arr", "value": { "arrayValue": { "values": [
                        { "intValue": "1" }, { "stringValue": "two" } ] } } },
                    { "key": "kv", "value": { "kvlistValue": { "values": [
                        { "key": "inner", "value": { "stringValue": "x" } } ] } } },
                    { "key": "raw", "value": { "bytesValue": "AQID" } } ],
                "droppedAttributesCount": 2,
                "events": [{ "timeUnixNano": (T0 + 1_000).to_string(), "name": "retry",
                    "attributes": [{ "key": "attempt", "value": { "intValue": "2" } }] }],
                "droppedEventsCount": 1,
                "status": { "code": 2, "message": "boom" }
            }, {
                "traceId": tid, "spanId": hex(&[seed, 9, 9, 9, 9, 9, 9, 9]), "parentSpanId": pid,
                "name": "search.Nearby", "kind": 3,
                "startTimeUnixNano": (T0 + 1_000_000).to_string(),
                "endTimeUnixNano": (T0 + 4_000_000).to_string(),
                "links": [{ "traceId": hex(&trace_id(seed + 100)), "spanId": "0707070707070707",
                    "attributes": [{ "key": "why", "value": { "stringValue": "batch" } }] }],
                "droppedLinksCount": 3
            }]
        }]
    }]});
    serde_json::to_vec(&doc).unwrap()
}

/// The rows [`request`]`(seed)` must become.
pub fn expected(seed: u8) -> Vec<SpanRow> {
    let tid = hex(&trace_id(seed));
    let pid = format!("{seed:02x}01020304050607");
    let parent = SpanRow {
        trace_id: tid.clone(),
        span_id: pid.clone(),
        parent_span_id: None,
        trace_state: "vendor=a".into(),
        flags: 1,
        name: "GET /hotels".into(),
        kind: 2,
        start_ns: T0 as i64,
        end_ns: (T0 + 5_000_000) as i64,
        scope_name: "intpath-test".into(),
        scope_version: "1.2".into(),
        attributes: json!({
            "route": "/hotels", "status": 200, "ratio": 0.5, "cached": true,
            "arr": [1, "two"], "kv": { "inner": "x" }, "raw": { "bytesValue": "AQID" }
        })
        .to_string(),
        events: json!([{ "time_ns": T0 + 1_000, "name": "retry", "attributes": { "attempt": 2 } }])
            .to_string(),
        links: "[]".into(),
        status_code: 2,
        status_message: "boom".into(),
        dropped_attributes: 2,
        dropped_events: 1,
        dropped_links: 0,
    };
    let link_tid = hex(&trace_id(seed + 100));
    let child = SpanRow {
        trace_id: tid,
        span_id: format!("{seed:02x}09090909090909"),
        parent_span_id: Some(pid),
        trace_state: String::new(),
        flags: 0,
        name: "search.Nearby".into(),
        kind: 3,
        start_ns: (T0 + 1_000_000) as i64,
        end_ns: (T0 + 4_000_000) as i64,
        scope_name: "intpath-test".into(),
        scope_version: "1.2".into(),
        attributes: "{}".into(),
        events: "[]".into(),
        links: json!([{ "trace_id": link_tid, "span_id": "0707070707070707",
                        "trace_state": "", "attributes": { "why": "batch" } }])
        .to_string(),
        status_code: 0,
        status_message: String::new(),
        dropped_attributes: 0,
        dropped_events: 0,
        dropped_links: 3,
    };
    vec![parent, child]
}

/// A receiver on free loopback ports, OTLP/HTTP and OTLP/gRPC, taking
/// bodies up to `max_body` bytes.
pub async fn start(db: impl Into<Db>, max_body: usize) -> Receiver {
    let cfg = Config {
        max_body,
        ..Config::default()
    };
    start_with(db, cfg).await
}

/// A receiver on free loopback ports, OTLP/HTTP and OTLP/gRPC, otherwise
/// configured as `cfg` says.
pub async fn start_with(db: impl Into<Db>, cfg: Config) -> Receiver {
    let cfg = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        grpc_listen: Some("127.0.0.1:0".parse().unwrap()),
        ..cfg
    };
    Receiver::start(Store::open(db).await.unwrap(), cfg)
        .await
        .unwrap()
}

/// Everything stored in `db`, once its receiver has shut down.
pub async fn stored(db: impl Into<Db>) -> StoredSpans {
    Store::open_existing(db)
        .await
        .unwrap()
        .spans()
        .await
        .unwrap()
}

/// Lowercase hex, as ids are stored.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
