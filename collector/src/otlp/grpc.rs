//! OTLP/gRPC: `opentelemetry.proto.collector.trace.v1.TraceService/Export`
//! on `opentelemetry-proto`'s generated tonic server, gzip accepted and
//! answered in kind. Same rows, writer and answers as OTLP/HTTP: OK with
//! `partial_success` once stored, UNAVAILABLE (retryable) when the store
//! cannot take the spans or the receiver is stopping, INVALID_ARGUMENT for a
//! message that does not decode.

use super::ingest::Shared;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use tonic::codec::CompressionEncoding;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

struct Traces(Shared);

#[tonic::async_trait]
impl TraceService for Traces {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        match self.0.export(request.into_inner()).await {
            Ok(resp) => Ok(Response::new(resp)),
            Err(e) => {
                tracing::debug!("gRPC export answered UNAVAILABLE: {}", e.0);
                Err(Status::unavailable(e.0))
            }
        }
    }
}

/// Serves until `stop` fires, then lets the calls in flight finish.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    shared: Shared,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), tonic::transport::Error> {
    let max = shared.max_body;
    let traces = TraceServiceServer::new(Traces(shared))
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip)
        .max_decoding_message_size(max);
    tonic::transport::Server::builder()
        .layer(tower::util::MapResponseLayer::new(undecodable_is_invalid))
        .add_service(traces)
        .serve_with_incoming_shutdown(TcpIncoming::from(listener), stop)
        .await
}

/// tonic answers a message its codec cannot decode (bad protobuf, bad gzip)
/// with INTERNAL before our handler runs; OTLP asks for INVALID_ARGUMENT, so
/// that the sender does not mistake its own bad data for our fault. Our
/// handler never answers INTERNAL, so every INTERNAL here is such a message.
/// Those answers are trailers-only: the status is in the headers.
fn undecodable_is_invalid<B>(mut resp: axum::http::Response<B>) -> axum::http::Response<B> {
    let internal = i32::from(tonic::Code::Internal).to_string();
    let h = resp.headers_mut();
    if h.get("grpc-status")
        .is_some_and(|v| v.as_bytes() == internal.as_bytes())
    {
        let invalid = i32::from(tonic::Code::InvalidArgument);
        h.insert("grpc-status", axum::http::HeaderValue::from(invalid));
    }
    resp
}
