//! The OTLP trace receiver: any OpenTelemetry SDK or collector exports spans
//! to it over OTLP/HTTP or OTLP/gRPC, and they land in the telemetry database beside the
//! INT samples a diagnosis joins them with.
//!
//! Requests flow `http` or `grpc` (decode, `opentelemetry-proto`'s messages)
//! → `ingest` → `convert` (rows, rejected spans counted) → `writer` (group
//! commit into `store::spans`). A request is answered after its spans are committed;
//! [`Receiver::shutdown`] stops taking connections, lets the requests in
//! flight finish and stores everything queued before the database closes.
//! With [`Config::export`], `export` diagnoses the traces stored and sends
//! them on to an OTLP backend as they complete.

mod convert;
pub mod export;
mod grpc;
mod http;
mod ingest;
mod json;
mod summary;
mod writer;

pub use export::{ExportConfig, ExportSummary};
pub use summary::{Requests, SpansLost, Summary};

use crate::serve::{self, Limits, Tls};
use intpath_store::Store;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// The OTLP/HTTP port the specification names.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:4318";
/// The OTLP/gRPC port the specification names.
pub const DEFAULT_GRPC_LISTEN: &str = "127.0.0.1:4317";

#[derive(Debug, Clone)]
pub struct Config {
    /// Where OTLP/HTTP is served (always).
    pub listen: SocketAddr,
    /// Where OTLP/gRPC is served, if anywhere.
    pub grpc_listen: Option<SocketAddr>,
    /// Largest request body, compressed or not (413 past it).
    pub max_body: usize,
    /// Most spans one transaction takes from the queue.
    pub max_batch_spans: usize,
    /// Longest shutdown waits for requests in flight.
    pub drain: Duration,
    /// Timeouts and the connection cap of both listeners.
    pub limits: Limits,
    /// TLS on both listeners (none: plaintext).
    pub tls: Tls,
    /// Send the traces stored on, diagnosed, as they complete.
    pub export: Option<ExportConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: DEFAULT_LISTEN.parse().expect("a socket address"),
            grpc_listen: None,
            max_body: 16 << 20,
            max_batch_spans: 50_000,
            drain: Duration::from_secs(10),
            limits: Limits::default(),
            tls: None,
            export: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReceiverError {
    #[error("cannot listen for OTLP on {0}: {1}")]
    Listen(SocketAddr, std::io::Error),
    #[error("cannot start the OTLP export")]
    Export(#[from] export::ExportStartError),
}

/// A running receiver.
pub struct Receiver {
    addr: SocketAddr,
    grpc_addr: Option<SocketAddr>,
    drain: Duration,
    stop: watch::Sender<bool>,
    finish: oneshot::Sender<()>,
    server: JoinHandle<()>,
    grpc: Option<JoinHandle<()>>,
    writer: JoinHandle<writer::Written>,
    counts: Arc<summary::Counts>,
    exporter: Option<export::Exporter>,
}

/// Binds `addr`, naming it in the error.
async fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), ReceiverError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| ReceiverError::Listen(addr, e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| ReceiverError::Listen(addr, e))?;
    Ok((listener, bound))
}

/// Resolves once `stop` says so (or its sender is gone).
async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|&s| s).await;
}

impl Receiver {
    /// Listens on `cfg.listen` and `cfg.grpc_listen` (port 0 picks a free
    /// one) and stores into `store`, which the receiver closes when it shuts
    /// down.
    pub async fn start(store: Store, cfg: Config) -> Result<Self, ReceiverError> {
        let (listener, addr) = bind(cfg.listen).await?;
        let grpc_listener = match cfg.grpc_listen {
            Some(a) => Some(bind(a).await?),
            None => None,
        };
        let exporter = match cfg.export {
            Some(e) => Some(export::Exporter::start(store.db().clone(), e).await?),
            None => None,
        };
        let (jobs, queue) = mpsc::channel(256);
        let (finish, finishing) = oneshot::channel();
        let writer = tokio::spawn(writer::run(
            store,
            queue,
            finishing,
            cfg.max_batch_spans.max(1),
        ));
        let counts = Arc::new(summary::Counts::default());
        let shared = ingest::Shared {
            jobs,
            max_body: cfg.max_body,
            counts: counts.clone(),
        };
        let (stop, stop_rx) = watch::channel(false);
        let grpc_addr = grpc_listener.as_ref().map(|(_, a)| *a);
        let grpc = grpc_listener.map(|(listener, a)| {
            tracing::info!("OTLP/gRPC receiver on {a}");
            tokio::spawn(serve::serve(
                listener,
                "OTLP/gRPC",
                cfg.limits,
                cfg.tls.clone(),
                grpc::service(shared.clone()),
                stopped(stop_rx.clone()),
            ))
        });
        let server = tokio::spawn(serve::serve(
            listener,
            "OTLP/HTTP",
            cfg.limits,
            cfg.tls.clone(),
            http::router(shared),
            stopped(stop_rx),
        ));
        let scheme = if cfg.tls.is_some() { "https" } else { "http" };
        tracing::info!("OTLP/HTTP receiver on {scheme}://{addr}/v1/traces");
        Ok(Self {
            addr,
            grpc_addr,
            drain: cfg.drain,
            stop,
            finish,
            server,
            grpc,
            writer,
            counts,
            exporter,
        })
    }

    /// Where OTLP/HTTP is served.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where OTLP/gRPC is served, if it is.
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.grpc_addr
    }

    /// Stops accepting, waits (up to the drain time) for the requests in
    /// flight, stores everything queued and closes the database; then the
    /// export, if any, runs its last round.
    pub async fn shutdown(self) -> Result<Summary, ReceiverError> {
        let _ = self.stop.send(true);
        let until = tokio::time::Instant::now() + self.drain;
        drained(self.server, until).await;
        if let Some(g) = self.grpc {
            drained(g, until).await;
        }
        let _ = self.finish.send(());
        let w = self.writer.await.unwrap_or_default();
        let export = match self.exporter {
            Some(e) => Some(e.finish().await),
            None => None,
        };
        let n = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        Ok(Summary {
            requests: self.counts.requests(),
            spans_stored: w.spans,
            spans_duplicate: w.duplicate,
            spans_rejected: n(&self.counts.rejected),
            spans_conflicting: n(&self.counts.conflicting),
            spans_refused: w.refused,
            spans_lost: w.lost,
            transactions: w.transactions,
            failed_transactions: w.failed_transactions,
            lost_reason: w.last_error.filter(|_| w.lost > 0),
            export,
        })
    }
}

/// Waits for a server to finish its requests in flight, up to `until`.
async fn drained(mut server: JoinHandle<()>, until: tokio::time::Instant) {
    if tokio::time::timeout_at(until, &mut server).await.is_err() {
        tracing::warn!("OTLP clients still connected at the end of the drain time: closing");
        server.abort();
    }
}
