//! One service as an HTTP server: every request runs under a SERVER span
//! continuing the caller's trace, and the delay fault, when set, is served
//! inside that span so that it shows where a tracer would see it.

use crate::client::PeerClient;
use crate::config::{ConfigError, Delay, Peers, Service};
use crate::services::{router, AppState};
use crate::telemetry::{Export, Telemetry, TelemetryError};
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::Response;
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// How to run one service.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub service: Service,
    pub listen: SocketAddr,
    pub peers: Peers,
    pub delay: Option<Delay>,
    pub export: Export,
    /// The address spans name as `host.ip`; by default the listen address,
    /// or 127.0.0.1 when listening on all addresses.
    pub host_ip: Option<IpAddr>,
    /// Deadline of each call to a peer.
    pub call_timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error(transparent)]
    Telemetry(#[from] TelemetryError),
    #[error("serving: {0}")]
    Serve(std::io::Error),
}

/// What the tracing middleware needs about this server.
#[derive(Debug)]
struct Traced {
    telemetry: Arc<Telemetry>,
    local: SocketAddr,
    delay: Option<Delay>,
    /// When serving began: the delay fault's clock.
    started: std::time::Instant,
}

/// A bound, not yet serving, service.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    app: axum::Router,
    telemetry: Arc<Telemetry>,
}

impl Server {
    /// Checks the peers, binds and sets up tracing. Call inside a Tokio
    /// multi-thread runtime.
    pub async fn bind(cfg: ServeConfig) -> Result<Self, ServeError> {
        cfg.peers.check_for(cfg.service)?;
        let listener = TcpListener::bind(cfg.listen)
            .await
            .map_err(|e| ServeError::Bind(cfg.listen, e))?;
        let local = listener
            .local_addr()
            .map_err(|e| ServeError::Bind(cfg.listen, e))?;
        let host_ip = cfg.host_ip.unwrap_or(if local.ip().is_unspecified() {
            IpAddr::from([127, 0, 0, 1])
        } else {
            local.ip()
        });
        let telemetry = Arc::new(Telemetry::new(cfg.service.name(), host_ip, &cfg.export)?);
        let peers = PeerClient::new(cfg.peers, telemetry.clone(), cfg.call_timeout);
        let traced = Arc::new(Traced {
            telemetry: telemetry.clone(),
            local,
            delay: cfg.delay,
            started: std::time::Instant::now(),
        });
        let app = router(cfg.service)
            .layer(from_fn_with_state(traced, serve_traced))
            .with_state(AppState::new(peers));
        Ok(Server {
            listener,
            app,
            telemetry,
        })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `stop` resolves, then exports the spans still queued.
    pub async fn run(
        self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let make = self.app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(self.listener, make)
            .with_graceful_shutdown(stop)
            .await
            .map_err(ServeError::Serve)?;
        let telemetry = self.telemetry;
        tokio::task::spawn_blocking(move || telemetry.shutdown())
            .await
            .map_err(|e| ServeError::Serve(std::io::Error::other(e)))??;
        Ok(())
    }
}

/// Runs the request under a SERVER span, child of the `traceparent` it
/// came with, after the injected delay if this request draws it.
async fn serve_traced(
    State(t): State<Arc<Traced>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
    next: Next,
) -> Response {
    let parent = t.telemetry.extract(req.headers());
    let path = req.uri().path().to_owned();
    let mut attrs = vec![
        KeyValue::new("http.request.method", req.method().to_string()),
        KeyValue::new("url.path", path.clone()),
        KeyValue::new("server.address", t.local.ip().to_string()),
        KeyValue::new("server.port", i64::from(t.local.port())),
        KeyValue::new("network.peer.address", peer.ip().to_string()),
        KeyValue::new("network.peer.port", i64::from(peer.port())),
    ];
    let delay = t
        .delay
        .filter(|d| t.started.elapsed() >= d.after)
        .filter(|d| rand::random::<f64>() * 100.0 < d.percent())
        .map(|d| d.extra);
    if let Some(d) = delay {
        attrs.push(KeyValue::new("fault.delay_ms", d.as_millis() as i64));
    }
    let span = t
        .telemetry
        .tracer()
        .span_builder(format!("{} {path}", req.method()))
        .with_kind(SpanKind::Server)
        .with_attributes(attrs)
        .start_with_context(t.telemetry.tracer(), &parent);
    let cx = Context::current_with_span(span);
    let work = async move {
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
        next.run(req).await
    };
    let resp = work.with_context(cx.clone()).await;
    let span = cx.span();
    let status = resp.status();
    span.set_attribute(KeyValue::new(
        "http.response.status_code",
        i64::from(status.as_u16()),
    ));
    if status.is_server_error() {
        span.set_status(Status::error(status.to_string()));
    }
    span.end();
    resp
}
