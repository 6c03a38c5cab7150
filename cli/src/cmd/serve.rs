//! `intpath serve`: the live web view of a telemetry database
//! (`intpath_web`), until Ctrl-C.

use anyhow::Result;
use intpath_store::Db;
use intpath_web::{ServeConfig, Server, DEFAULT_LISTEN};
use std::net::SocketAddr;

/// Serve a live web view of a telemetry database: heatmaps, topology and
/// probe paths, links, runs and the diagnosis. Read-only.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Telemetry database: a SQLite file or a `postgres://` URL. It may not
    /// exist yet: the page waits for the collector to create it.
    #[arg(long, default_value = "telemetry.db")]
    pub db: Db,
    /// Address to listen on; loopback unless you mean to share the page
    /// (it has no login).
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Seconds of the newest telemetry the live heatmap shows.
    #[arg(long, default_value_t = 120.0, value_parser = positive_seconds)]
    pub live_window: f64,
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

impl Args {
    /// The server's settings: what `intpath demo --web` starts too.
    pub fn config(&self) -> ServeConfig {
        ServeConfig {
            listen: self.listen,
            live_window_s: self.live_window,
            ..ServeConfig::new(self.db.clone())
        }
    }
}

pub fn run(a: Args) -> Result<()> {
    let rt = super::runtime()?;
    rt.block_on(async {
        let stop = intpath_core::shutdown::signals()?;
        let server = Server::bind(a.config()).await?;
        println!("serving {} on {}", a.db, server.url());
        server.run(stop).await?;
        Ok(())
    })
}

/// The web view served from a thread of its own while the caller goes on
/// (`intpath demo --web`); stopped when dropped.
pub struct Background {
    /// The page's address.
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Binds `config.listen` (an error here, not later in the thread), prints
/// the page's address and serves until the handle is dropped.
pub fn in_background(config: ServeConfig) -> Result<Background> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let db = config.db.clone();
    let server = rt.block_on(Server::bind(config))?;
    let url = server.url();
    println!("web view of {db}: {url}");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let served = rt.block_on(server.run(async {
            let _ = stopped.await;
        }));
        if let Err(e) = served {
            tracing::warn!("{e}");
        }
    });
    Ok(Background {
        url,
        stop: Some(stop),
        thread: Some(thread),
    })
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
