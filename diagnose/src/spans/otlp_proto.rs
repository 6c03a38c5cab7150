//! OTLP protobuf as the OTLP JSON it stands for (the protocol's JSON
//! mapping: hex ids, 64-bit integers as strings, bytes in base64), so a
//! protobuf file is read by the same reader as a JSON one.

use base64::Engine;
use opentelemetry_proto::tonic::common::v1::{any_value::Value as Any, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{Span, TracesData};
use serde_json::{json, Value};

pub(super) fn to_json(data: &TracesData) -> Value {
    let resources: Vec<Value> = data
        .resource_spans
        .iter()
        .map(|rs| {
            let attributes = rs
                .resource
                .as_ref()
                .map_or(Value::Array(Vec::new()), |r| attributes(&r.attributes));
            let scopes: Vec<Value> = rs
                .scope_spans
                .iter()
                .map(|ss| json!({ "spans": ss.spans.iter().map(span).collect::<Vec<_>>() }))
                .collect();
            json!({ "resource": { "attributes": attributes }, "scopeSpans": scopes })
        })
        .collect();
    json!({ "resourceSpans": resources })
}

fn span(s: &Span) -> Value {
    let mut v = json!({
        "traceId": const_hex::encode(&s.trace_id),
        "spanId": const_hex::encode(&s.span_id),
        "name": s.name,
        "kind": s.kind,
        "startTimeUnixNano": s.start_time_unix_nano.to_string(),
        "endTimeUnixNano": s.end_time_unix_nano.to_string(),
        "attributes": attributes(&s.attributes),
    });
    if !s.parent_span_id.is_empty() {
        v["parentSpanId"] = json!(const_hex::encode(&s.parent_span_id));
    }
    if let Some(status) = &s.status {
        v["status"] = json!({ "code": status.code, "message": status.message });
    }
    v
}

fn attributes(kvs: &[KeyValue]) -> Value {
    kvs.iter()
        .map(|kv| json!({ "key": kv.key, "value": any(kv.value.as_ref()) }))
        .collect()
}

fn any(v: Option<&AnyValue>) -> Value {
    match v.and_then(|v| v.value.as_ref()) {
        Some(Any::StringValue(s)) => json!({ "stringValue": s }),
        Some(Any::BoolValue(b)) => json!({ "boolValue": b }),
        Some(Any::IntValue(i)) => json!({ "intValue": i.to_string() }),
        Some(Any::DoubleValue(d)) => json!({ "doubleValue": d }),
        Some(Any::ArrayValue(a)) => {
            let values: Vec<Value> = a.values.iter().map(|x| any(Some(x))).collect();
            json!({ "arrayValue": { "values": values } })
        }
        Some(Any::KvlistValue(l)) => json!({ "kvlistValue": { "values": attributes(&l.values) } }),
        Some(Any::BytesValue(b)) => {
            json!({ "bytesValue": base64::engine::general_purpose::STANDARD.encode(b) })
        }
        // An index into a profile's string table: traces have none.
        Some(Any::StringValueStrindex(_)) | None => json!({}),
    }
}
