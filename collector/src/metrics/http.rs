//! The `/metrics` HTTP endpoint.

use super::Metrics;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// OpenMetrics 1.0, which Prometheus asks for first.
const CONTENT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}: cannot serve /metrics: {1}")]
    Listen(SocketAddr, std::io::Error),
}

/// A running `/metrics` endpoint.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    server: JoinHandle<()>,
}

async fn scrape(State(metrics): State<Metrics>) -> impl IntoResponse {
    ([(CONTENT_TYPE, CONTENT)], metrics.encode())
}

impl MetricsServer {
    /// Serves `metrics` on `listen` (port 0 picks a free one) within
    /// `limits`, over TLS when `tls` says.
    pub async fn start(
        metrics: Metrics,
        listen: SocketAddr,
        limits: crate::serve::Limits,
        tls: crate::serve::Tls,
    ) -> Result<Self, ServeError> {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| ServeError::Listen(listen, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError::Listen(listen, e))?;
        let app = Router::new()
            .route("/metrics", get(scrape))
            .with_state(metrics);
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(crate::serve::serve(
            listener,
            "/metrics",
            limits,
            tls.clone(),
            app,
            async move {
                let _ = stopped.await;
            },
        ));
        let scheme = if tls.is_some() { "https" } else { "http" };
        tracing::info!("Prometheus metrics on {scheme}://{addr}/metrics");
        Ok(Self { addr, stop, server })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving (scrapes in flight finish first).
    pub async fn shutdown(self) -> Result<(), ServeError> {
        let _ = self.stop.send(());
        let _ = self.server.await;
        Ok(())
    }
}
