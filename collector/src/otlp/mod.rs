//! The OTLP trace receiver: any OpenTelemetry SDK or collector exports spans
//! to it over OTLP/HTTP, and they land in the telemetry database beside the
//! INT samples a diagnosis joins them with.
//!
//! Requests flow `http` (decode, `opentelemetry-proto`'s messages) →
//! `convert` (rows, rejected spans counted) → `writer` (group commit into
//! `store::spans`). A request is answered after its spans are committed;
//! [`Receiver::shutdown`] stops taking connections, lets the requests in
//! flight finish and stores everything queued before the database closes.

mod convert;
mod http;
mod writer;

use crate::store::Store;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// The OTLP/HTTP port the specification names.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:4318";

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// Largest request body, compressed or not (413 past it).
    pub max_body: usize,
    /// Most spans one transaction takes from the queue.
    pub max_batch_spans: usize,
    /// Longest shutdown waits for requests in flight.
    pub drain: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: DEFAULT_LISTEN.parse().expect("a socket address"),
            max_body: 16 << 20,
            max_batch_spans: 50_000,
            drain: Duration::from_secs(10),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReceiverError {
    #[error("cannot listen for OTLP on {0}: {1}")]
    Listen(SocketAddr, std::io::Error),
    #[error("OTLP server: {0}")]
    Serve(std::io::Error),
}

/// What a receiver did over its life.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Summary {
    /// Export requests answered 200.
    pub requests: u64,
    pub spans_stored: u64,
    /// Spans left out of accepted requests (reported as partial success).
    pub spans_rejected: u64,
    pub transactions: u64,
    pub failed_transactions: u64,
}

/// A running receiver.
pub struct Receiver {
    addr: SocketAddr,
    drain: Duration,
    stop: oneshot::Sender<()>,
    finish: oneshot::Sender<()>,
    server: JoinHandle<std::io::Result<()>>,
    writer: JoinHandle<writer::Written>,
    counts: Arc<http::Counts>,
}

impl Receiver {
    /// Listens on `cfg.listen` (port 0 picks a free one) and stores into
    /// `store`, which the receiver closes when it shuts down.
    pub async fn start(store: Store, cfg: Config) -> Result<Self, ReceiverError> {
        let listener = tokio::net::TcpListener::bind(cfg.listen)
            .await
            .map_err(|e| ReceiverError::Listen(cfg.listen, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ReceiverError::Listen(cfg.listen, e))?;
        let (jobs, queue) = mpsc::channel(256);
        let (finish, finishing) = oneshot::channel();
        let writer = tokio::spawn(writer::run(
            store,
            queue,
            finishing,
            cfg.max_batch_spans.max(1),
        ));
        let counts = Arc::new(http::Counts::default());
        let app = http::router(http::Shared {
            jobs,
            max_body: cfg.max_body,
            counts: counts.clone(),
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        });
        tracing::info!("OTLP/HTTP receiver on http://{addr}/v1/traces");
        Ok(Self {
            addr,
            drain: cfg.drain,
            stop,
            finish,
            server,
            writer,
            counts,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, waits (up to the drain time) for the requests in
    /// flight, stores everything queued and closes the database.
    pub async fn shutdown(self) -> Result<Summary, ReceiverError> {
        let _ = self.stop.send(());
        let mut server = self.server;
        let served = match tokio::time::timeout(self.drain, &mut server).await {
            Ok(r) => r.unwrap_or(Ok(())),
            Err(_) => {
                tracing::warn!(
                    "OTLP clients still connected after {:?}: closing",
                    self.drain
                );
                server.abort();
                Ok(())
            }
        };
        let _ = self.finish.send(());
        let w = self.writer.await.unwrap_or_default();
        served.map_err(ReceiverError::Serve)?;
        Ok(Summary {
            requests: self.counts.requests.load(Ordering::Relaxed),
            spans_stored: w.spans,
            spans_rejected: self.counts.rejected.load(Ordering::Relaxed),
            transactions: w.transactions,
            failed_transactions: w.failed_transactions,
        })
    }
}
