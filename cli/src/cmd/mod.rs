//! One module per subcommand: its clap `Args` and its `run`, which maps
//! the flags onto a typed request of a library and prints the answer.

#[cfg(feature = "lab")]
pub mod demo;
#[cfg(feature = "lab")]
pub mod deploy;
pub mod diagnose;
pub mod docs;
pub mod eval;
pub mod heatmap;
mod hosts;
#[cfg(feature = "lab")]
pub mod lab;
pub mod plan;
pub mod query;
#[cfg(feature = "web")]
pub mod serve;
#[cfg(feature = "lab")]
pub mod switches;
mod telemetry;
pub mod topo;
#[cfg(feature = "lab")]
pub mod watch;

/// Writes `text` to `path`, or to stdout for `None` / `-`. A reader that
/// closed stdout early (`| head`) has read all it wanted: that is no
/// error, as it is none for `cat`.
pub fn emit(path: Option<&std::path::Path>, text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    match path {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::write(p, text).with_context(|| format!("{}: cannot write", p.display()))
        }
        _ => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => Ok(r?),
            }
        }
    }
}

/// The runtime the controller's requests run on.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}
