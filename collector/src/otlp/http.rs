//! OTLP/HTTP: `POST /v1/traces` with a protobuf or JSON
//! `ExportTraceServiceRequest`, optionally gzipped, answered as the OTLP
//! specification says: 200 with an `ExportTraceServiceResponse` (its
//! `partial_success` counting rejected spans) once the spans are stored; a
//! `google.rpc.Status` with 400 for a body that does not decode, 413 for one
//! over the size limit, 415 for a media type or encoding we do not speak and
//! 503 (retryable) when the store cannot take it. Answers use the request's
//! encoding.

use super::ingest::Shared;
use super::summary::Outcome;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;
use std::io::Read;

pub(crate) fn router(shared: Shared) -> Router {
    Router::new()
        .route("/v1/traces", post(export))
        .with_state(shared)
}

/// The two OTLP/HTTP encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Protobuf,
    Json,
}

impl Encoding {
    fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }
}

/// A failed export: the HTTP status and a one-line reason.
struct Failure(StatusCode, String);

/// `google.rpc.Status`, the body of every OTLP/HTTP error answer (it is not
/// among `opentelemetry-proto`'s messages; OTLP uses its first two fields).
#[derive(Clone, PartialEq, prost::Message, serde::Serialize)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

async fn export(State(s): State<Shared>, headers: HeaderMap, body: Body) -> Response {
    let Some(enc) = media_type(&headers) else {
        let got = header_text(&headers, header::CONTENT_TYPE);
        let f = Failure(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "unsupported Content-Type {got:?}: send application/x-protobuf or application/json"
            ),
        );
        s.counts.answered(Outcome::Unsupported);
        return failure(Encoding::Json, f);
    };
    match accept(&s, enc, &headers, body).await {
        Ok(resp) => {
            let body = match (enc, resp.partial_success.is_some()) {
                (Encoding::Protobuf, _) => resp.encode_to_vec(),
                (Encoding::Json, true) => serde_json::to_vec(&resp).unwrap_or_default(),
                (Encoding::Json, false) => b"{}".to_vec(),
            };
            ([(header::CONTENT_TYPE, enc.content_type())], body).into_response()
        }
        Err(f) => {
            tracing::debug!("export answered {}: {}", f.0, f.1);
            let outcome = match f.0 {
                StatusCode::BAD_REQUEST => Some(Outcome::Invalid),
                StatusCode::PAYLOAD_TOO_LARGE => Some(Outcome::TooLarge),
                StatusCode::UNSUPPORTED_MEDIA_TYPE => Some(Outcome::Unsupported),
                // 503: counted where the store refused.
                _ => None,
            };
            if let Some(o) = outcome {
                s.counts.answered(o);
            }
            failure(enc, f)
        }
    }
}

/// Reads, decodes and stores one request; answers once it is stored.
async fn accept(
    s: &Shared,
    enc: Encoding,
    headers: &HeaderMap,
    body: Body,
) -> Result<ExportTraceServiceResponse, Failure> {
    let gzip = match header_text(headers, header::CONTENT_ENCODING).as_str() {
        "" | "identity" => false,
        "gzip" => true,
        other => {
            return Err(Failure(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("unsupported Content-Encoding {other:?}: send gzip or none"),
            ))
        }
    };
    let raw = read_body(body, headers, s.max_body).await?;
    let bytes = if gzip { gunzip(&raw, s.max_body)? } else { raw };
    let req = match enc {
        Encoding::Protobuf => ExportTraceServiceRequest::decode(bytes.as_slice())
            .map_err(|e| Failure(StatusCode::BAD_REQUEST, format!("bad protobuf body: {e}")))?,
        Encoding::Json => serde_json::from_slice::<ExportTraceServiceRequest>(&bytes)
            .map_err(|e| Failure(StatusCode::BAD_REQUEST, format!("bad JSON body: {e}")))?,
    };
    drop(bytes);
    s.export(req)
        .await
        .map_err(|e| Failure(StatusCode::SERVICE_UNAVAILABLE, e.0))
}

async fn read_body(body: Body, headers: &HeaderMap, max: usize) -> Result<Vec<u8>, Failure> {
    let too_large = || {
        Failure(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("body over the {max}-byte limit (--otlp-max-body)"),
        )
    };
    let declared = header_text(headers, header::CONTENT_LENGTH)
        .parse::<u64>()
        .ok();
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    match Limited::new(body, max).collect().await {
        Ok(c) => Ok(c.to_bytes().to_vec()),
        Err(e) if e.is::<LengthLimitError>() => Err(too_large()),
        Err(e) => Err(Failure(
            StatusCode::BAD_REQUEST,
            format!("cannot read the body: {e}"),
        )),
    }
}

/// Decompresses at most `max` bytes: a small gzip body may not unpack into
/// an unbounded one.
fn gunzip(raw: &[u8], max: usize) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::with_capacity(raw.len() * 4);
    flate2::read::GzDecoder::new(raw)
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Failure(StatusCode::BAD_REQUEST, format!("bad gzip body: {e}")))?;
    if out.len() > max {
        return Err(Failure(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("body over the {max}-byte limit once decompressed (--otlp-max-body)"),
        ));
    }
    Ok(out)
}

fn media_type(headers: &HeaderMap) -> Option<Encoding> {
    let ct = header_text(headers, header::CONTENT_TYPE);
    match ct.split(';').next().unwrap_or_default().trim() {
        "application/x-protobuf" | "application/protobuf" => Some(Encoding::Protobuf),
        "application/json" => Some(Encoding::Json),
        _ => None,
    }
}

/// A header's value, trimmed and lowercased ("" when absent or not text).
fn header_text(headers: &HeaderMap, name: header::HeaderName) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn failure(enc: Encoding, Failure(code, message): Failure) -> Response {
    // gRPC's codes for the same conditions: UNAVAILABLE, RESOURCE_EXHAUSTED,
    // INVALID_ARGUMENT.
    let grpc = match code {
        StatusCode::SERVICE_UNAVAILABLE => tonic::Code::Unavailable,
        StatusCode::PAYLOAD_TOO_LARGE => tonic::Code::ResourceExhausted,
        _ => tonic::Code::InvalidArgument,
    };
    let status = RpcStatus {
        code: grpc.into(),
        message,
    };
    let body = match enc {
        Encoding::Protobuf => status.encode_to_vec(),
        Encoding::Json => serde_json::to_vec(&status).unwrap_or_default(),
    };
    (code, [(header::CONTENT_TYPE, enc.content_type())], body).into_response()
}
