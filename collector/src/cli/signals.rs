//! SIGINT and SIGTERM, caught from before the daemon binds anything: a
//! signal that arrives once a listener is up (a supervisor, or a test that
//! waited for the port) must stop the daemon cleanly, with its summary,
//! rather than kill it with the default action.

use tokio::signal::unix::{signal, Signal, SignalKind};

pub struct Signals {
    term: Signal,
    int: Signal,
}

impl Signals {
    /// Catches both signals from now on.
    pub fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for either.
    pub async fn recv(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
    }
}
