//! The OTLP/gRPC receiver over real gRPC (tonic clients) into a real SQLite
//! file: plain and gzip exports read back field for field, bad spans as a
//! partial success, messages that do not decode answered INVALID_ARGUMENT
//! and oversized ones RESOURCE_EXHAUSTED, with nothing stored.

mod common;

use common::otlp::{expected, request, start, stored};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use prost::Message;
use std::net::SocketAddr;
use tonic::codec::CompressionEncoding;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::{Code, Status};

async fn client(addr: SocketAddr) -> TraceServiceClient<tonic::transport::Channel> {
    TraceServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap()
}

#[tokio::test]
async fn plain_and_gzip_exports_are_stored_field_for_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let r = start(&db, 1 << 20).await;
    let addr = r.grpc_addr().expect("gRPC served");
    let mut plain = client(addr).await;
    let mut gzip = client(addr)
        .await
        .send_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Gzip);
    let resp = plain.export(request(1)).await.unwrap().into_inner();
    assert_eq!(resp, ExportTraceServiceResponse::default());
    let resp = gzip.export(request(2)).await.unwrap();
    assert_eq!(
        resp.metadata().get("grpc-encoding").map(|v| v.as_bytes()),
        Some(&b"gzip"[..]),
        "answered in gzip, as asked"
    );
    assert_eq!(resp.into_inner().partial_success, None);
    // A retry of the first export is stored once.
    plain.export(request(1)).await.unwrap();
    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.requests.ok, 3);
    assert_eq!(
        (summary.spans_stored, summary.spans_duplicate),
        (4, 2),
        "three requests of two spans, one a retry: {summary:?}"
    );

    let got = stored(&db).await;
    let rows: Vec<_> = got.spans.iter().map(|s| s.span.clone()).collect();
    let want: Vec<_> = [1, 2].into_iter().flat_map(expected).collect();
    assert_eq!(rows, want);
    assert_eq!(got.resources.len(), 1);
}

#[tokio::test]
async fn bad_spans_are_a_partial_success() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let r = start(&db, 1 << 20).await;
    let mut req = request(1);
    req.resource_spans[0].scope_spans[0].spans[1]
        .span_id
        .truncate(3);
    let mut c = client(r.grpc_addr().unwrap()).await;
    let resp = c.export(req).await.unwrap().into_inner();
    let partial = resp.partial_success.expect("partial success");
    assert_eq!(partial.rejected_spans, 1);
    assert_eq!(
        partial.error_message,
        "rejected 1 of 2 spans; first: resource 0, span 1: span_id has 3 bytes, want 8"
    );
    let summary = r.shutdown().await.unwrap();
    assert_eq!(summary.spans_rejected, 1);
    assert_eq!(summary.requests.partial, 1);
    let got = stored(&db).await;
    assert_eq!(got.spans.len(), 1);
    assert_eq!(got.spans[0].span, expected(1)[0]);
}

/// An export request's first field (`resource_spans`) as raw bytes: lets a
/// real tonic client send what no OTLP exporter would.
#[derive(Clone, PartialEq, prost::Message)]
struct RawExport {
    #[prost(bytes = "vec", tag = "1")]
    resource_spans: Vec<u8>,
}

async fn export_raw(addr: SocketAddr, body: RawExport, gzip: bool) -> Result<(), Status> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    if gzip {
        grpc = grpc.send_compressed(CompressionEncoding::Gzip);
    }
    grpc.ready().await.unwrap();
    let path =
        PathAndQuery::from_static("/opentelemetry.proto.collector.trace.v1.TraceService/Export");
    let codec = tonic_prost::ProstCodec::<RawExport, ExportTraceServiceResponse>::default();
    grpc.unary(tonic::Request::new(body), path, codec)
        .await
        .map(|_| ())
}

#[tokio::test]
async fn undecodable_messages_are_invalid_arguments_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let max = 64 << 10;
    let r = start(&db, max).await;
    let addr = r.grpc_addr().unwrap();
    let whole = request(1).resource_spans[0].encode_to_vec();
    let huge = {
        let mut req = request(1);
        req.resource_spans[0].scope_spans[0].spans[0].name = "x".repeat(max);
        req.resource_spans[0].encode_to_vec()
    };
    // Compresses far below the limit, unpacks past it.
    let bomb = {
        let mut req = request(1);
        req.resource_spans[0].scope_spans[0].spans[0].name = "a".repeat(4 * max);
        req.resource_spans[0].encode_to_vec()
    };
    // (first field's bytes, gzip, code, what the message says): an
    // oversized message is RESOURCE_EXHAUSTED, as gRPC's own servers answer
    // it, which OTLP exporters do not retry (OUT_OF_RANGE they would).
    let cases = [
        (
            whole[..whole.len() / 2].to_vec(),
            false,
            Code::InvalidArgument,
            "",
        ),
        (vec![0xff; 3], false, Code::InvalidArgument, ""),
        (huge, false, Code::ResourceExhausted, "too large"),
        (bomb, true, Code::ResourceExhausted, "size limit"),
    ];
    for (bytes, gzip, code, says) in cases {
        let err = export_raw(
            addr,
            RawExport {
                resource_spans: bytes,
            },
            gzip,
        )
        .await
        .expect_err("refused");
        assert_eq!(err.code(), code, "{err}");
        assert!(err.message().contains(says), "{err}");
    }
    let summary = r.shutdown().await.unwrap();
    let want = intpath_collector::otlp::Requests {
        invalid: 2,
        too_large: 2,
        ..Default::default()
    };
    assert_eq!(summary.requests, want, "every request counted by outcome");
    assert!(stored(&db).await.spans.is_empty());
}
