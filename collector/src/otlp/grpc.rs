//! OTLP/gRPC: `opentelemetry.proto.collector.trace.v1.TraceService/Export`
//! on `opentelemetry-proto`'s generated tonic server, gzip accepted and
//! answered in kind. Same rows, writer and answers as OTLP/HTTP: OK with
//! `partial_success` once stored, UNAVAILABLE (retryable) when the store
//! cannot take the spans or the receiver is stopping, INVALID_ARGUMENT for a
//! message that does not decode, RESOURCE_EXHAUSTED for one over the size
//! limit.

use super::ingest::Shared;
use super::summary::{Counts, Outcome};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use tonic::codec::CompressionEncoding;
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

/// The TraceService, with the codec's refusals answered and counted as
/// OTLP asks.
pub(crate) fn service(
    shared: Shared,
) -> impl tower::Service<
    axum::http::Request<hyper::body::Incoming>,
    Response = axum::http::Response<tonic::body::Body>,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    let max = shared.max_body;
    let counts = shared.counts.clone();
    let traces = TraceServiceServer::new(Traces(shared))
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip)
        .max_decoding_message_size(max);
    tower::ServiceBuilder::new()
        .map_response(move |resp| codec_refusal(resp, &counts))
        .service(traces)
}

/// tonic refuses a message its codec cannot take before our handler runs,
/// and with codes OTLP does not want: INTERNAL for one that does not decode
/// (bad protobuf, bad gzip), where OTLP asks for INVALID_ARGUMENT so that the
/// sender does not mistake its own bad data for our fault; OUT_OF_RANGE for
/// one over the size limit (RESOURCE_EXHAUSTED when it is over only once
/// decompressed), which OTLP exporters retry, forever, where gRPC's own
/// servers answer RESOURCE_EXHAUSTED, which they do not. Our handler never
/// answers these codes, so every one here is the codec's, and is counted
/// here. Those answers are trailers-only: the status is in the headers.
fn codec_refusal<B>(mut resp: axum::http::Response<B>, counts: &Counts) -> axum::http::Response<B> {
    let h = resp.headers_mut();
    let code = h
        .get("grpc-status")
        .and_then(|v| v.to_str().ok()?.parse::<i32>().ok())
        .map(tonic::Code::from);
    let (outcome, answer) = match code {
        Some(tonic::Code::Internal | tonic::Code::InvalidArgument) => {
            (Outcome::Invalid, tonic::Code::InvalidArgument)
        }
        Some(tonic::Code::OutOfRange | tonic::Code::ResourceExhausted) => {
            (Outcome::TooLarge, tonic::Code::ResourceExhausted)
        }
        _ => return resp,
    };
    counts.answered(outcome);
    h.insert(
        "grpc-status",
        axum::http::HeaderValue::from(i32::from(answer)),
    );
    resp
}
