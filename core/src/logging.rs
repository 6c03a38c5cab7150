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

/// Ends a program with its result: a failure is one line on stderr,
/// `PROGRAM: error: what: why`, with anyhow's causes joined by `{:#}`. A
/// `main` returning `Result` would print the `Debug` form instead: causes on
/// separate lines and, with `RUST_BACKTRACE=1`, a stack backtrace for what is
/// a user's mistake.
pub fn exit<E: std::fmt::Display>(program: &str, result: Result<(), E>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program}: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
