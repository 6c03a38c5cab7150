//! The OTLP/HTTP receiver over real HTTP into a real SQLite file: protobuf,
//! JSON and gzip bodies read back field for field; malformed bodies answered
//! with the right status and nothing stored; SIGTERM under load loses no
//! acknowledged span.

use intpath_collector::otlp::{Config, Receiver};
use intpath_collector::store::spans::{ResourceRow, SpanRow};
use intpath_collector::Store;
use intpath_test_support::otlp::{gzip_bytes, post, wait_for_listener};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value as V, AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span, Status};
use prost::Message;
use serde_json::json;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

const PROTO: &str = "application/x-protobuf";
const JSON: &str = "application/json";
const T0: u64 = 1_700_000_000_123_456_789;

fn kv(key: &str, v: V) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(v) }),
        ..Default::default()
    }
}

fn trace_id(seed: u8) -> Vec<u8> {
    (1..=16).map(|i| i * 3 + seed).collect()
}

/// A server span with every kind of attribute, an event and an error
/// status, and its client child with a link; `seed` makes the ids unique.
fn request(seed: u8) -> ExportTraceServiceRequest {
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

/// [`request`] as an OTLP/JSON document written out by hand, as the
/// specification's JSON encoding has it (hex ids, decimal-string nanos and
/// int64s), not as our serializer would make it.
fn request_json(seed: u8) -> Vec<u8> {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
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
fn expected(seed: u8) -> Vec<SpanRow> {
    let tid: String = trace_id(seed).iter().map(|x| format!("{x:02x}")).collect();
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
    let link_tid: String = trace_id(seed + 100)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect();
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

async fn start(db: &Path, max_body: usize) -> Receiver {
    let cfg = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        max_body,
        ..Config::default()
    };
    Receiver::start(Store::open(db).await.unwrap(), cfg)
        .await
        .unwrap()
}

#[tokio::test]
async fn protobuf_json_and_gzip_bodies_are_stored_field_for_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let r = start(&db, 1 << 20).await;
    let addr = r.local_addr().to_string();
    let client = reqwest::Client::new();
    let sends = [
        (PROTO, request(1).encode_to_vec(), false),
        (JSON, request_json(2), false),
        (PROTO, request(3).encode_to_vec(), true),
        (JSON, request_json(4), true),
    ];
    for (ct, body, gzip) in sends {
        let (enc, body) = match gzip {
            true => (Some("gzip"), gzip_bytes(&body)),
            false => (None, body),
        };
        let a = post(&client, &addr, ct, enc, body).await.unwrap();
        assert_eq!(a.status, 200, "{ct} gzip={gzip}: {:?}", a.body);
        assert_eq!(a.content_type, ct);
        if ct == PROTO {
            let resp = ExportTraceServiceResponse::decode(a.body.as_slice()).unwrap();
            assert_eq!(resp.partial_success, None);
        } else {
            assert_eq!(a.body, b"{}");
        }
    }
    // The same spans again (an exporter retrying) are stored once.
    let again = post(&client, &addr, PROTO, None, request(1).encode_to_vec());
    assert_eq!(again.await.unwrap().status, 200);
    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.requests, 5);
    assert_eq!(summary.spans_rejected, 0);

    let store = Store::open_existing(&db).await.unwrap();
    let got = store.spans().await.unwrap();
    let rows: Vec<&SpanRow> = got.spans.iter().map(|s| &s.span).collect();
    let want: Vec<SpanRow> = [1, 2, 3, 4].into_iter().flat_map(expected).collect();
    assert_eq!(rows, want.iter().collect::<Vec<_>>());
    // One resource, shared by every request.
    assert_eq!(got.resources.len(), 1);
    let res = &got.resources[&got.spans[0].resource_id];
    assert_eq!(
        *res,
        ResourceRow {
            service: "frontend".into(),
            attributes: json!({ "service.name": "frontend", "host.name": "h1" }).to_string(),
        }
    );
    assert!(got.spans.iter().all(|s| s.received_ns > T0 as i64));
}

#[tokio::test]
async fn bad_spans_are_rejected_one_by_one_as_partial_success() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let r = start(&db, 1 << 20).await;
    let addr = r.local_addr().to_string();
    let mut req = request(1);
    let spans = &mut req.resource_spans[0].scope_spans[0].spans;
    spans[1].trace_id.truncate(5);
    for ct in [PROTO, JSON] {
        let body = match ct {
            PROTO => req.encode_to_vec(),
            _ => serde_json::to_vec(&req).unwrap(),
        };
        let a = post(&reqwest::Client::new(), &addr, ct, None, body)
            .await
            .unwrap();
        assert_eq!(a.status, 200);
        let resp: ExportTraceServiceResponse = match ct {
            PROTO => ExportTraceServiceResponse::decode(a.body.as_slice()).unwrap(),
            _ => serde_json::from_slice(&a.body).unwrap(),
        };
        let partial = resp.partial_success.expect("partial success");
        assert_eq!(partial.rejected_spans, 1);
        assert_eq!(
            partial.error_message,
            "rejected 1 of 2 spans; first: resource 0, span 1: trace_id has 5 bytes, want 16"
        );
    }
    r.shutdown().await.unwrap();
    let got = Store::open_existing(&db)
        .await
        .unwrap()
        .spans()
        .await
        .unwrap();
    assert_eq!(got.spans.len(), 1, "the good span, once");
    assert_eq!(got.spans[0].span, expected(1)[0]);
}

/// `google.rpc.Status` as the receiver answers errors.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

#[tokio::test]
async fn malformed_bodies_get_their_status_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let max = 64 << 10;
    let r = start(&db, max).await;
    let addr = r.local_addr().to_string();
    let client = reqwest::Client::new();
    let proto = request(1).encode_to_vec();
    let json = request_json(1);
    let huge = {
        let mut req = request(1);
        req.resource_spans[0].scope_spans[0].spans[0].name = "x".repeat(max);
        req.encode_to_vec()
    };
    // Compresses far below the limit but unpacks past it.
    let mut bomb = request(1);
    bomb.resource_spans[0].scope_spans[0].spans[0].name = "a".repeat(4 * max);
    let bomb = gzip_bytes(&bomb.encode_to_vec());
    assert!(bomb.len() < max);
    let gz = Some("gzip");
    // (Content-Type, Content-Encoding, body, status, what the message says)
    type Case<'a> = (&'a str, Option<&'a str>, Vec<u8>, u16, &'a str);
    let cases: Vec<Case> = vec![
        (
            PROTO,
            None,
            proto[..proto.len() / 2].to_vec(),
            400,
            "bad protobuf body",
        ),
        (
            JSON,
            None,
            json[..json.len() - 3].to_vec(),
            400,
            "bad JSON body",
        ),
        (
            JSON,
            None,
            b"{\"resourceSpans\": 7}".to_vec(),
            400,
            "bad JSON body",
        ),
        (
            PROTO,
            gz,
            gzip_bytes(&proto[..20]),
            400,
            "bad protobuf body",
        ),
        (PROTO, gz, proto.clone(), 400, "bad gzip body"),
        (JSON, gz, b"{}".to_vec(), 400, "bad gzip body"),
        (
            "text/plain",
            None,
            proto.clone(),
            415,
            "unsupported Content-Type",
        ),
        ("", None, proto.clone(), 415, "unsupported Content-Type"),
        (
            PROTO,
            Some("br"),
            proto.clone(),
            415,
            "unsupported Content-Encoding",
        ),
        (PROTO, None, huge, 413, "byte limit"),
        (PROTO, gz, bomb, 413, "once decompressed"),
    ];
    for (ct, enc, body, status, says) in cases {
        let a = post(&client, &addr, ct, enc, body).await.unwrap();
        // Errors come in the request's encoding; JSON for one we do not know.
        let message = match a.content_type.as_str() {
            PROTO => RpcStatus::decode(a.body.as_slice()).unwrap().message,
            JSON => serde_json::from_slice::<serde_json::Value>(&a.body).unwrap()["message"]
                .as_str()
                .unwrap()
                .to_owned(),
            other => panic!("error answered as {other:?}"),
        };
        assert_eq!(a.status, status, "{ct} {enc:?}: {message}");
        assert!(message.contains(says), "{ct}: {message:?} lacks {says:?}");
        if ct == PROTO || ct == JSON {
            assert_eq!(a.content_type, ct);
        }
    }

    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.requests, 0);
    let got = Store::open_existing(&db)
        .await
        .unwrap()
        .spans()
        .await
        .unwrap();
    assert!(got.spans.is_empty(), "stored {} spans", got.spans.len());
}

/// 200 spans of their own per request: request `n` of client `c`.
fn load_request(c: u8, n: u32) -> ExportTraceServiceRequest {
    let mut req = request(0);
    let rs = &mut req.resource_spans[0].scope_spans[0];
    let template = rs.spans[0].clone();
    rs.spans = (0..200u32)
        .map(|i| {
            let mut s = template.clone();
            s.trace_id[..4].copy_from_slice(&n.to_be_bytes());
            s.trace_id[4] = c;
            s.span_id[..4].copy_from_slice(&i.to_be_bytes());
            s
        })
        .collect();
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_loses_no_acknowledged_span() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let addr = intpath_test_support::free_addr();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["receive", "--db"])
        .arg(&db)
        .args(["--otlp-listen", &addr])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for_listener(&addr, Duration::from_secs(20)));
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for c in 0..4u8 {
        let (client, addr) = (client.clone(), addr.clone());
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for n in 0..10_000u32 {
                let body = load_request(c, n).encode_to_vec();
                let (enc, body) = match n % 2 {
                    1 => (Some("gzip"), gzip_bytes(&body)),
                    _ => (None, body),
                };
                match post(&client, &addr, PROTO, enc, body).await {
                    Ok(a) if a.status == 200 => acked.push(n),
                    _ => break,
                }
            }
            (c, acked)
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let mut acked = HashSet::new();
    for t in tasks {
        let (c, ns) = t.await.unwrap();
        assert!(!ns.is_empty(), "client {c} got no answer before SIGTERM");
        assert!(ns.len() < 10_000, "client {c} was never stopped");
        for n in ns {
            for i in 0..200u32 {
                let s =
                    load_request(c, n).resource_spans[0].scope_spans[0].spans[i as usize].clone();
                acked.insert((
                    s.trace_id
                        .iter()
                        .map(|x| format!("{x:02x}"))
                        .collect::<String>(),
                    s.span_id
                        .iter()
                        .map(|x| format!("{x:02x}"))
                        .collect::<String>(),
                ));
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "receiver exited with {}", out.status);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    let got = Store::open_existing(&db)
        .await
        .unwrap()
        .spans()
        .await
        .unwrap();
    let stored: HashSet<(String, String)> = got
        .spans
        .into_iter()
        .map(|s| (s.span.trace_id, s.span.span_id))
        .collect();
    let lost = acked.difference(&stored).count();
    assert_eq!(lost, 0, "{lost} of {} acknowledged spans lost", acked.len());
    assert_eq!(summary["spans_stored"].as_u64(), Some(stored.len() as u64));
}
