//! HTTP/1.1 GETs with keep-alive, plain (the load generator) or as a traced
//! RPC from one service to a peer (a CLIENT span whose context travels in
//! the request's `traceparent`).

use crate::config::{Peers, Service};
use crate::telemetry::Telemetry;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use serde::de::DeserializeOwned;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Bodies larger than this are refused: our services answer in a few KiB.
const MAX_BODY: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("GET {0}: {1}")]
    Connect(String, hyper_util::client::legacy::Error),
    #[error("GET {0}: no answer within {1:?}")]
    Timeout(String, Duration),
    #[error("GET {0}: status {1}")]
    Status(String, http::StatusCode),
    #[error("GET {0}: reading the body: {1}")]
    Body(String, String),
    #[error("GET {0}: bad JSON: {1}")]
    Json(String, serde_json::Error),
    #[error("GET {0}: not a valid URI")]
    Uri(String),
    #[error("no address for peer {0}")]
    NoPeer(Service),
}

/// A keep-alive HTTP/1.1 client with a per-request deadline.
#[derive(Debug, Clone)]
pub struct HttpClient {
    inner: Client<HttpConnector, Empty<Bytes>>,
    timeout: Duration,
}

impl HttpClient {
    pub fn new(timeout: Duration) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let inner = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        HttpClient { inner, timeout }
    }

    /// GETs `http://{addr}{path}` with `headers` and returns the body of a
    /// 2xx answer.
    pub async fn get(
        &self,
        addr: SocketAddr,
        path: &str,
        headers: http::HeaderMap,
    ) -> Result<Bytes, CallError> {
        let url = format!("http://{addr}{path}");
        let mut req = http::Request::get(url.as_str())
            .body(Empty::new())
            .map_err(|_| CallError::Uri(url.clone()))?;
        req.headers_mut().extend(headers);
        let work = async {
            let resp = self
                .inner
                .request(req)
                .await
                .map_err(|e| CallError::Connect(url.clone(), e))?;
            let status = resp.status();
            let body = Limited::new(resp.into_body(), MAX_BODY)
                .collect()
                .await
                .map_err(|e| CallError::Body(url.clone(), e.to_string()))?
                .to_bytes();
            if !status.is_success() {
                return Err(CallError::Status(url.clone(), status));
            }
            Ok(body)
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .map_err(|_| CallError::Timeout(url.clone(), self.timeout))?
    }
}

/// A service's way to its callees.
#[derive(Debug, Clone)]
pub struct PeerClient {
    http: HttpClient,
    peers: Peers,
    telemetry: Arc<Telemetry>,
}

impl PeerClient {
    pub fn new(peers: Peers, telemetry: Arc<Telemetry>, timeout: Duration) -> Self {
        PeerClient {
            http: HttpClient::new(timeout),
            peers,
            telemetry,
        }
    }

    /// Calls `peer` at `path` under a CLIENT span, child of the current
    /// context, and decodes its JSON answer.
    pub async fn call<T: DeserializeOwned>(
        &self,
        peer: Service,
        path: &str,
    ) -> Result<T, CallError> {
        let addr = self.peers.get(peer).ok_or(CallError::NoPeer(peer))?;
        let route = path.split('?').next().unwrap_or(path);
        let span = self
            .telemetry
            .tracer()
            .span_builder(format!("GET {route}"))
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new("http.request.method", "GET"),
                KeyValue::new("server.address", addr.ip().to_string()),
                KeyValue::new("server.port", i64::from(addr.port())),
                KeyValue::new("network.peer.address", addr.ip().to_string()),
                KeyValue::new("network.peer.port", i64::from(addr.port())),
                KeyValue::new("peer.service", peer.name()),
                KeyValue::new("url.full", format!("http://{addr}{path}")),
            ])
            .start_with_context(self.telemetry.tracer(), &Context::current());
        let cx = Context::current_with_span(span);
        let mut headers = http::HeaderMap::new();
        self.telemetry.inject(&cx, &mut headers);
        let result = self.http.get(addr, path, headers).await.and_then(|body| {
            serde_json::from_slice(&body).map_err(|e| CallError::Json(format!("{addr}{path}"), e))
        });
        let span = cx.span();
        match &result {
            Ok(_) => span.set_attribute(KeyValue::new("http.response.status_code", 200)),
            Err(e) => {
                if let CallError::Status(_, s) = e {
                    span.set_attribute(KeyValue::new(
                        "http.response.status_code",
                        i64::from(s.as_u16()),
                    ));
                }
                span.set_status(Status::error(e.to_string()));
            }
        }
        span.end();
        result
    }
}
