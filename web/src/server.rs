//! Binding and serving: the listener is bound before [`Server::run`], so a
//! caller knows the address (port 0 picks one) before the first request.

use crate::config::ServeConfig;
use crate::state::AppState;
use crate::{api, assets};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("the web server failed: {0}")]
    Serve(std::io::Error),
}

pub struct Server {
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl Server {
    pub async fn bind(config: ServeConfig) -> Result<Self, WebError> {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| WebError::Bind(config.listen, e))?;
        if !config.listen.ip().is_loopback() {
            tracing::warn!(
                "serving {} on {}: the page has no login, anyone who reaches this address reads \
                 the telemetry and the traces",
                config.db,
                config.listen
            );
        }
        let (stop, stopping) = tokio::sync::watch::channel(false);
        Ok(Server {
            listener,
            state: Arc::new(AppState::new(config, stopping)),
            stop,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The page's address, as a browser takes it.
    pub fn url(&self) -> String {
        format!("http://{}/", self.local_addr())
    }

    /// Serves until `shutdown` completes, then closes the store.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), WebError> {
        let app = api::routes()
            .merge(assets::routes())
            .with_state(self.state.clone());
        let stop = self.stop;
        let shutdown = async move {
            shutdown.await;
            stop.send_replace(true);
        };
        axum::serve(self.listener, app)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(WebError::Serve)?;
        self.state.close().await;
        Ok(())
    }
}
