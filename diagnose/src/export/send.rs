//! Posting an export request to an OTLP/HTTP backend: protobuf bodies of at
//! most [`SPANS_PER_REQUEST`] spans, each answer read for the spans the
//! backend rejected. One implementation for `intpath diagnose
//! --export-otlp` (all at once) and the receiver's continuous export (batch
//! by batch, the unsent ones kept for its next round).

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::trace::v1::ScopeSpans;
use prost::Message;
use std::time::Duration;

/// Spans per request: a few MB, under every backend's default body limit.
pub const SPANS_PER_REQUEST: usize = 2000;

/// Longest one request may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(10);

/// An OTLP/HTTP traces URL: `http://HOST:PORT` (the endpoint; `/v1/traces`
/// is added) or the full `…/v1/traces` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint(String);

impl Endpoint {
    /// The URL requests are posted to.
    pub fn url(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for Endpoint {
    type Err = ExportError;
    fn from_str(url: &str) -> Result<Self, ExportError> {
        if !url.starts_with("http://") {
            return Err(ExportError::NotHttp(url.to_owned()));
        }
        Ok(Endpoint(match url.trim_end_matches('/') {
            u if u.ends_with("/v1/traces") => u.to_owned(),
            u => format!("{u}/v1/traces"),
        }))
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0:?} is not an http:// URL of an OTLP/HTTP endpoint")]
    NotHttp(String),
    #[error("{url}: cannot export: {cause}")]
    Unreachable { url: Endpoint, cause: String },
    #[error("{url}: the backend answered {status}: {answer}")]
    Status {
        url: Endpoint,
        status: u16,
        answer: String,
    },
    #[error("cannot start an HTTP client: {0}")]
    Client(String),
}

impl ExportError {
    /// Whether sending the same request later may succeed: the backend was
    /// not reached or asked for it (429, 502, 503, 504: OTLP's retryable
    /// answers); any other refusal is final.
    pub fn retryable(&self) -> bool {
        match self {
            ExportError::Unreachable { .. } => true,
            ExportError::Status { status, .. } => matches!(status, 429 | 502 | 503 | 504),
            ExportError::NotHttp(_) | ExportError::Client(_) => false,
        }
    }
}

/// One request's worth of spans.
#[derive(Debug, Clone)]
pub struct Batch {
    pub request: ExportTraceServiceRequest,
    pub spans: usize,
}

/// What a backend took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    /// Spans posted and acknowledged.
    pub spans: u64,
    /// Of those, the spans the backend said it rejected (`partial_success`).
    pub rejected: u64,
}

/// `req` split into requests of at most [`SPANS_PER_REQUEST`] spans.
pub fn batches(req: ExportTraceServiceRequest) -> Vec<Batch> {
    let mut out = Vec::new();
    for rs in req.resource_spans {
        for ss in &rs.scope_spans {
            for part in ss.spans.chunks(SPANS_PER_REQUEST) {
                let mut one = rs.clone();
                one.scope_spans = vec![ScopeSpans {
                    spans: part.to_vec(),
                    ..ss.clone()
                }];
                out.push(Batch {
                    request: ExportTraceServiceRequest {
                        resource_spans: vec![one],
                    },
                    spans: part.len(),
                });
            }
        }
    }
    out
}

/// Posts to one backend; cheap to clone (one connection pool).
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: Endpoint,
}

impl Client {
    pub fn new(endpoint: Endpoint) -> Result<Self, ExportError> {
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| ExportError::Client(intpath_core::logging::one_line(&e)))?;
        Ok(Client { http, endpoint })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Posts one batch as protobuf; the spans the backend rejected.
    pub async fn post(&self, batch: &Batch) -> Result<u64, ExportError> {
        let url = &self.endpoint;
        let unreachable = |e: reqwest::Error| ExportError::Unreachable {
            url: url.clone(),
            cause: intpath_core::logging::one_line(&e),
        };
        let resp = self
            .http
            .post(url.url())
            .header("content-type", "application/x-protobuf")
            .body(batch.request.encode_to_vec())
            .send()
            .await
            .map_err(unreachable)?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(ExportError::Status {
                url: url.clone(),
                status: status.as_u16(),
                answer: String::from_utf8_lossy(&bytes)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            });
        }
        let answer = ExportTraceServiceResponse::decode(bytes.as_ref()).unwrap_or_default();
        Ok(answer
            .partial_success
            .map_or(0, |p| p.rejected_spans.max(0) as u64))
    }

    /// Posts all of `req`, batch after batch; stops at the first failure.
    pub async fn send(&self, req: ExportTraceServiceRequest) -> Result<Sent, ExportError> {
        let mut sent = Sent::default();
        for b in batches(req) {
            sent.rejected += self.post(&b).await?;
            sent.spans += b.spans as u64;
        }
        Ok(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, Span};

    #[test]
    fn endpoints_get_the_traces_path_once() {
        let e = |s: &str| s.parse::<Endpoint>().map(|e| e.url().to_owned());
        assert_eq!(
            e("http://h:4318").unwrap(),
            "http://h:4318/v1/traces".to_owned()
        );
        assert_eq!(
            e("http://h:4318/v1/traces/").unwrap(),
            "http://h:4318/v1/traces".to_owned()
        );
        let err = e("localhost:4318").unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"localhost:4318\" is not an http:// URL of an OTLP/HTTP endpoint"
        );
        assert!(!err.retryable());
    }

    #[test]
    fn batches_hold_at_most_the_request_size() {
        let spans = |n: usize| ScopeSpans {
            spans: vec![Span::default(); n],
            ..Default::default()
        };
        let req = ExportTraceServiceRequest {
            resource_spans: vec![
                ResourceSpans {
                    scope_spans: vec![spans(SPANS_PER_REQUEST * 2 + 1), spans(3)],
                    ..Default::default()
                },
                ResourceSpans {
                    scope_spans: vec![spans(5)],
                    ..Default::default()
                },
            ],
        };
        let b = batches(req);
        let sizes: Vec<usize> = b.iter().map(|b| b.spans).collect();
        assert_eq!(sizes, [SPANS_PER_REQUEST, SPANS_PER_REQUEST, 1, 3, 5]);
        for b in &b {
            let n: usize = b.request.resource_spans[0].scope_spans[0].spans.len();
            assert_eq!(n, b.spans);
        }
    }

    #[test]
    fn only_unreached_or_busy_backends_are_retried() {
        let url: Endpoint = "http://h:1".parse().unwrap();
        let status = |status| ExportError::Status {
            url: url.clone(),
            status,
            answer: String::new(),
        };
        assert!(status(503).retryable());
        assert!(status(429).retryable());
        assert!(!status(400).retryable());
        assert!(!status(404).retryable());
        let down = ExportError::Unreachable {
            url: url.clone(),
            cause: "Connection refused".into(),
        };
        assert!(down.retryable());
    }

    #[tokio::test]
    async fn a_backend_that_is_down_is_one_unreachable_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = Client::new(format!("http://127.0.0.1:{port}").parse().unwrap()).unwrap();
        let err = c
            .send(ExportTraceServiceRequest {
                resource_spans: vec![ResourceSpans {
                    scope_spans: vec![ScopeSpans {
                        spans: vec![Span::default()],
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
            })
            .await
            .unwrap_err();
        assert!(err.retryable(), "{err}");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "http://127.0.0.1:{port}/v1/traces: cannot export: "
            )),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
    }
}
