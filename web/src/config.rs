//! What `intpath serve` is asked to do.

use intpath_store::Db;
use std::net::SocketAddr;
use std::time::Duration;

/// Loopback: the page shows a network's telemetry and its requests, and
/// has no login, so it is reachable from elsewhere only when asked.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8088";

#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The telemetry database to read (it may not exist yet).
    pub db: Db,
    /// Where to listen; port 0 picks a free one.
    pub listen: SocketAddr,
    /// How often the live stream looks for new telemetry.
    pub tick: Duration,
    /// Seconds of the newest telemetry the live heatmap shows.
    pub live_window_s: f64,
}

impl ServeConfig {
    pub fn new(db: Db) -> Self {
        ServeConfig {
            db,
            listen: DEFAULT_LISTEN.parse().expect("a socket address"),
            tick: Duration::from_secs(1),
            live_window_s: 120.0,
        }
    }
}
