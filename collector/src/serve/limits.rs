//! How long a connection may take and how many may be open: a client that
//! opens connections and sends nothing, or half a header, must not hold the
//! process' file descriptors until nobody else gets through.

use std::time::Duration;

/// The limits every listener of the collector enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A new connection must send a request's headers within this long; an
    /// HTTP/1 connection kept alive must send its next request's headers
    /// within this long of the previous answer (hyper's header timer).
    pub header_timeout: Duration,
    /// A connection with no request in flight for this long is closed (for
    /// HTTP/1, the header timeout when that is shorter).
    pub idle_timeout: Duration,
    /// Most connections open at once over all of the process' listeners;
    /// at the cap the oldest idle one is closed for each new one.
    pub max_connections: usize,
}

/// Descriptors kept back from the cap for the database, capture sockets,
/// the listeners themselves and whatever the runtime opens.
const RESERVED_FDS: u64 = 64;

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: max_connections_for(open_file_limit()),
        }
    }
}

/// The process' soft limit on open files.
pub fn open_file_limit() -> u64 {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft)
}

/// The connection cap under a file limit: what it leaves after
/// [`RESERVED_FDS`], at least 16 and at most 100,000.
pub fn max_connections_for(nofile: u64) -> usize {
    nofile.saturating_sub(RESERVED_FDS).clamp(16, 100_000) as usize
}
