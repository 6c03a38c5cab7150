//! How every daemon stops: on SIGTERM or SIGINT, cleanly, with what it
//! owes (its summary, its buffered rows). The handlers are installed when
//! [`signals`] is called, so a daemon calls it before it binds anything: a
//! supervisor or a test that stops it the moment its port answers must not
//! kill it by the signal's default action.

use std::future::Future;

/// Catches SIGTERM and SIGINT from now on; the future ends at the first.
/// Within a Tokio runtime.
pub fn signals() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}
