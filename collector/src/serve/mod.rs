//! Every listener of the collector (OTLP/HTTP, OTLP/gRPC, `/metrics`) is
//! served by this one accept loop: hyper's HTTP/1 and HTTP/2, with the
//! [`Limits`] a hostile or careless client meets. A connection that sends no
//! request within the header timeout, or has none in flight for the idle
//! timeout, is closed; at the process-wide connection cap (below the file
//! limit, so the process can still accept) the oldest idle connection is
//! closed for each new one. The cap is logged once when first reached and
//! the counts when the server stops. With TLS (`tls`) the handshake comes
//! first, within the header timeout; a plaintext listener on an address
//! other than loopback says so in one line.

mod conns;
mod limits;
mod tls;

pub use limits::{max_connections_for, open_file_limit, Limits};
pub use tls::{server_config, TlsError, TlsFiles};

/// A listener's TLS settings (none: plaintext).
pub type Tls = Option<Arc<rustls::ServerConfig>>;

use conns::{Conn, Table};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tower::ServiceExt as _;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What every listener serves: an HTTP service that never fails (errors
/// are responses), cloned per connection, its futures spawned.
pub(crate) trait HttpService<B>:
    tower::Service<
        http::Request<Incoming>,
        Response = http::Response<B>,
        Error = std::convert::Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<S, B> HttpService<B> for S where
    S: tower::Service<
            http::Request<Incoming>,
            Response = http::Response<B>,
            Error = std::convert::Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}
type Answer = std::pin::Pin<
    Box<
        dyn Future<
                Output = Result<
                    http::Response<
                        http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, BoxError>,
                    >,
                    std::convert::Infallible,
                >,
            > + Send,
    >,
>;

/// A connection's byte stream, TCP or TLS over TCP.
trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

/// How long a connection told to close may finish what it has in flight.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Serves `service` on `listener` until `stop`, then closes every
/// connection gracefully and waits for them.
pub(crate) async fn serve<S, B>(
    listener: TcpListener,
    name: &'static str,
    limits: Limits,
    tls: Tls,
    service: S,
    stop: impl Future<Output = ()>,
) where
    S: HttpService<B>,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    if let Ok(addr) = listener.local_addr() {
        if tls.is_none() && !addr.ip().is_loopback() {
            tracing::warn!(
                "{name} on {addr}: plaintext on an address other than loopback, anyone who \
                 reaches it can send; give --tls-cert and --tls-key (and --tls-client-ca to \
                 require client certificates)"
            );
        }
    }
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let table = Arc::new(Table::new(name, limits));
    let mut tasks = JoinSet::new();
    let mut sweep = tokio::time::interval(sweep_every(&limits));
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut accept_failing = false;
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = sweep.tick() => table.sweep(),
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            r = listener.accept() => {
                let tcp = match r {
                    Ok((tcp, _)) => {
                        accept_failing = false;
                        tcp
                    }
                    Err(e) => {
                        // Out of descriptors (other files of the process):
                        // close an idle connection and try again shortly.
                        if !accept_failing {
                            tracing::warn!("{name}: cannot accept a connection: {e}");
                            accept_failing = true;
                        }
                        table.evict_for_new();
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = tcp.set_nodelay(true);
                let Some(conn) = table.admit() else { continue };
                tasks.spawn(connection(tcp, tls.clone(), conn, table.clone(), service.clone()));
            }
        }
    }
    drop(listener);
    table.close_all();
    while tasks.join_next().await.is_some() {}
    table.report();
}

/// The sweep runs often enough to hold both timeouts within a quarter.
fn sweep_every(l: &Limits) -> Duration {
    (l.header_timeout.min(l.idle_timeout) / 4)
        .clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// Serves one connection until it ends or is told to close.
async fn connection<S, B>(
    tcp: tokio::net::TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
    conn: Arc<Conn>,
    table: Arc<Table>,
    service: S,
) where
    S: HttpService<B>,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let tracked = conn.clone();
    let svc = hyper::service::service_fn(move |req: http::Request<Incoming>| {
        let call = service.clone().oneshot(req);
        let busy = tracked.begin();
        // Boxed, with one concrete body and error type: hyper's connection
        // future is then `Send` for `spawn`.
        let answer: Answer = Box::pin(async move {
            let r = call.await;
            drop(busy);
            let Ok(resp) = r;
            Ok(resp.map(|b| b.map_err(|e| -> BoxError { e.into() }).boxed_unsync()))
        });
        answer
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(table.limits.header_timeout);
    builder.http2().timer(TokioTimer::new());
    let io: Box<dyn Io> = match tls {
        None => Box::new(tcp),
        Some(acceptor) => {
            let handshake = tokio::time::timeout(table.limits.header_timeout, acceptor.accept(tcp));
            let handshake = tokio::select! {
                h = handshake => h,
                _ = conn.closing() => {
                    table.remove(&conn);
                    return;
                }
            };
            match handshake {
                Ok(Ok(s)) => Box::new(s),
                Ok(Err(e)) => {
                    tracing::debug!("TLS handshake refused: {e}");
                    table.remove(&conn);
                    return;
                }
                Err(_) => {
                    table.remove(&conn);
                    return;
                }
            }
        }
    };
    let served = builder.serve_connection(TokioIo::new(io), svc);
    tokio::pin!(served);
    tokio::select! {
        _ = served.as_mut() => {}
        _ = conn.closing() => {
            served.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(CLOSE_GRACE, served).await;
        }
    }
    table.remove(&conn);
}
