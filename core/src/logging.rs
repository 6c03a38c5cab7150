//! One way for every intpath program to log: to stderr (stdout is for
//! results other programs read), `RUST_LOG` over the program's default, and
//! colours only on a terminal so that log files stay plain text.

use std::io::IsTerminal;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs the global subscriber. `default` is a filter such as `info`,
/// `warn` or `info,intpath_store=debug` (levels, optionally per target: the
/// `RUST_LOG` syntax without span and field filters, which would take the
/// regex engine into every build), used when `RUST_LOG` is unset or invalid.
pub fn init(default: &str) -> Result<(), tracing_subscriber::filter::ParseError> {
    let filter = match std::env::var("RUST_LOG").map(|v| v.parse::<Targets>()) {
        Ok(Ok(f)) => f,
        _ => default.parse()?,
    };
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal()),
        )
        .with(filter)
        .init();
    Ok(())
}

/// Ends a program with its result: a failure is one line on stderr,
/// `PROGRAM: error: what: why`, each cause of the chain once ([`one_line`]).
/// A `main` returning `Result` would print the `Debug` form instead: causes
/// on separate lines and, with `RUST_BACKTRACE=1`, a stack backtrace for
/// what is a user's mistake.
pub fn exit<E>(program: &str, result: Result<(), E>) -> std::process::ExitCode
where
    E: AsRef<dyn std::error::Error + Send + Sync>,
{
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program}: error: {}", one_line(e.as_ref()));
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error and its causes joined by `: `, as anyhow's `{:#}` does, but a
/// cause the text already ends with is not repeated. Our own errors either
/// name their cause or hold it as their source, never both; foreign ones
/// (hyper's "tcp connect error: tcp connect error: …") may still do both.
pub fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !s.ends_with(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = cause.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::one_line;
    use crate::plan::Plan;

    #[test]
    fn a_bad_plan_file_names_each_cause_once() {
        let dir = std::env::temp_dir().join(format!("intpath-one-line-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("plan.json");
        std::fs::write(&path, "{ not json").unwrap();
        let e = Plan::load(&path).unwrap_err();
        let text = one_line(&e);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            text.contains(": not a plan file: key must be a string"),
            "{text}"
        );
        assert_eq!(text.matches("key must be a string").count(), 1, "{text}");
        // Not only when printed whole: the error itself holds its cause once.
        assert_eq!(e.to_string(), text);
    }
}
