//! The OTLP/HTTP receiver over real HTTP into a real SQLite file (and a real
//! PostgreSQL database): protobuf, JSON and gzip bodies read back field for
//! field; malformed bodies answered with the right status and nothing stored.

mod common;

use common::otlp::{
    expected, hex, request, request_json, start, stored, trace_id, JSON, PROTO, T0,
};
use intpath_store::spans::{ResourceRow, SpanRow};
use intpath_store::Db;
use intpath_test_support::on_both_backends;
use intpath_test_support::otlp::{gzip_bytes, post};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use prost::Message;
use serde_json::json;

// SQLite stores spans through rusqlite, PostgreSQL through sqlx: both
// backends, one body.
on_both_backends!(protobuf_json_and_gzip_bodies_are_stored_field_for_field);

async fn protobuf_json_and_gzip_bodies_are_stored_field_for_field(db: String) {
    let db: Db = db.parse().unwrap();
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
    // The same spans again (an exporter retrying) are stored once, and
    // counted as duplicates, not as stored.
    let again = post(&client, &addr, PROTO, None, request(1).encode_to_vec());
    let again = again.await.unwrap();
    assert_eq!(again.status, 200);
    let resp = ExportTraceServiceResponse::decode(again.body.as_slice()).unwrap();
    assert_eq!(resp.partial_success, None, "a retry is no conflict");
    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.requests.ok, 5, "{summary:?}");
    assert_eq!(summary.requests.total(), 5, "{summary:?}");
    assert_eq!(
        (summary.spans_stored, summary.spans_duplicate),
        (8, 2),
        "{summary:?}"
    );
    assert_eq!(summary.spans_rejected, 0);

    let got = stored(&db).await;
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
    let got = stored(&db).await;
    assert_eq!(got.spans.len(), 1, "the good span, once");
    assert_eq!(got.spans[0].span, expected(1)[0]);
}

// A span re-sent under a stored span's ids with other content (in a later
// request, or twice in one) is reported, not silently dropped: both backends.
on_both_backends!(conflicting_resends_are_a_partial_success);

async fn conflicting_resends_are_a_partial_success(db: String) {
    let db: Db = db.parse().unwrap();
    let r = start(&db, 1 << 20).await;
    let addr = r.local_addr().to_string();
    let client = reqwest::Client::new();
    let first = post(&client, &addr, PROTO, None, request(1).encode_to_vec());
    assert_eq!(first.await.unwrap().status, 200);
    // The child span again, renamed; the parent unchanged (a retry).
    let mut changed = request(1);
    changed.resource_spans[0].scope_spans[0].spans[1].name = "other".into();
    // And request 2's parent twice, the second time ending later.
    let mut twice = request(2);
    let spans = &mut twice.resource_spans[0].scope_spans[0].spans;
    let mut later = spans[0].clone();
    later.end_time_unix_nano += 1;
    spans.push(later);
    let cases = [
        (
            changed,
            format!("trace {} span {}", hex(&trace_id(1)), "0109090909090909"),
        ),
        (
            twice,
            format!("trace {} span {}", hex(&trace_id(2)), "0201020304050607"),
        ),
    ];
    for (req, first_conflict) in cases {
        for ct in [PROTO, JSON] {
            let body = match ct {
                PROTO => req.encode_to_vec(),
                _ => serde_json::to_vec(&req).unwrap(),
            };
            let a = post(&client, &addr, ct, None, body).await.unwrap();
            assert_eq!(a.status, 200);
            let resp: ExportTraceServiceResponse = match ct {
                PROTO => ExportTraceServiceResponse::decode(a.body.as_slice()).unwrap(),
                _ => serde_json::from_slice(&a.body).unwrap(),
            };
            let partial = resp.partial_success.expect("partial success");
            assert_eq!(partial.rejected_spans, 1, "{}", partial.error_message);
            assert!(
                partial.error_message.contains("other content")
                    && partial.error_message.contains(&first_conflict),
                "{}",
                partial.error_message
            );
        }
    }
    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.requests.ok, 1, "{summary:?}");
    assert_eq!(summary.requests.partial, 4, "{summary:?}");
    // Stored: request 1's two spans, request 2's two; duplicates: the
    // unchanged parent twice, request 2's spans once more (JSON).
    assert_eq!(
        (summary.spans_stored, summary.spans_duplicate),
        (4, 4),
        "{summary:?}"
    );
    assert_eq!(summary.spans_conflicting, 4, "{summary:?}");
    let got = stored(&db).await;
    let rows: Vec<&SpanRow> = got.spans.iter().map(|s| &s.span).collect();
    let want: Vec<SpanRow> = [1, 2].into_iter().flat_map(expected).collect();
    assert_eq!(rows, want.iter().collect::<Vec<_>>(), "the first kept");
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
        let (code, message) = match a.content_type.as_str() {
            PROTO => {
                let s = RpcStatus::decode(a.body.as_slice()).unwrap();
                (s.code, s.message)
            }
            JSON => {
                let v = serde_json::from_slice::<serde_json::Value>(&a.body).unwrap();
                (
                    v["code"].as_i64().unwrap() as i32,
                    v["message"].as_str().unwrap().to_owned(),
                )
            }
            other => panic!("error answered as {other:?}"),
        };
        assert_eq!(a.status, status, "{ct} {enc:?}: {message}");
        // gRPC's code for the same refusal.
        let grpc = match status {
            413 => tonic::Code::ResourceExhausted,
            _ => tonic::Code::InvalidArgument,
        };
        assert_eq!(code, grpc as i32, "{ct} {enc:?}: {message}");
        assert!(message.contains(says), "{ct}: {message:?} lacks {says:?}");
        if ct == PROTO || ct == JSON {
            assert_eq!(a.content_type, ct);
        }
    }

    let summary = r.shutdown().await.unwrap();
    let want = intpath_collector::otlp::Requests {
        invalid: 6,
        unsupported: 3,
        too_large: 2,
        ..Default::default()
    };
    assert_eq!(summary.requests, want, "every request counted by outcome");
    let got = stored(&db).await;
    assert!(got.spans.is_empty(), "stored {} spans", got.spans.len());
}
