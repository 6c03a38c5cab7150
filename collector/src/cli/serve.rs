//! The flags every listener of the collector shares (OTLP/HTTP, OTLP/gRPC,
//! `/metrics`): TLS, the timeouts and the connection cap.

use clap::Args;
use intpath_collector::serve::{server_config, Limits, Tls, TlsFiles};
use std::path::PathBuf;
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
    /// Serve every listener over TLS with this certificate chain (PEM, leaf
    /// first); needs --tls-key.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Require client certificates signed by these CAs (PEM): mutual TLS.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
}

impl LimitArgs {
    /// The TLS settings the flags give (none without --tls-cert).
    pub fn tls(&self) -> anyhow::Result<Tls> {
        let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) else {
            return Ok(None);
        };
        let files = TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: self.tls_client_ca.clone(),
        };
        Ok(Some(server_config(&files)?))
    }

    pub fn limits(&self) -> Limits {
        let d = Limits::default();
        Limits {
            header_timeout: Duration::from_millis(self.header_timeout_ms.max(1)),
            idle_timeout: Duration::from_millis(self.idle_timeout_ms.max(1)),
            max_connections: self.max_connections.unwrap_or(d.max_connections).max(1),
        }
    }
}
