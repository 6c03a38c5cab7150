//! The flags every listener of the collector shares (OTLP/HTTP, OTLP/gRPC,
//! `/metrics`): its timeouts and the connection cap.

use clap::Args;
use intpath_collector::serve::Limits;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Close a connection that has not sent a request's headers this long
    /// after opening (HTTP/1 keep-alive: after the previous answer).
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub header_timeout_ms: u64,
    /// Close a connection with no request in flight for this long.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub idle_timeout_ms: u64,
    /// Most connections open at once over all listeners; at the cap the
    /// oldest idle one is closed for each new one [default: the open-file
    /// limit less 64].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
}

impl LimitArgs {
    pub fn limits(&self) -> Limits {
        let d = Limits::default();
        Limits {
            header_timeout: Duration::from_millis(self.header_timeout_ms.max(1)),
            idle_timeout: Duration::from_millis(self.idle_timeout_ms.max(1)),
            max_connections: self.max_connections.unwrap_or(d.max_connections).max(1),
        }
    }
}
