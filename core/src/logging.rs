//! One way for every intpath program to log: to stderr (stdout is for
//! results other programs read), `RUST_LOG` over the program's default, and
//! colours only on a terminal so that log files stay plain text.

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `default` is an `EnvFilter` directive
/// such as `info` or `warn`, used when `RUST_LOG` is unset or invalid.
pub fn init(default: &str) -> Result<(), tracing_subscriber::filter::ParseError> {
    let filter = match EnvFilter::try_from_default_env() {
        Ok(f) => f,
        Err(_) => EnvFilter::try_new(default)?,
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    Ok(())
}
