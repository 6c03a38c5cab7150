//! `intpath-collector`: the capture daemon and the OTLP receiver. Reading the
//! telemetry back (`query`, `heatmap`) is the `intpath` command's.

mod cli;

use clap::{Parser, Subcommand};
use cli::collect::{self, CollectArgs};

#[derive(Debug, Parser)]
#[command(
    version,
    about = "Collect SR-INT probes into the telemetry store; receive OTLP traces"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    // Boxed: their flags are hundreds of bytes.
    Collect(Box<CollectArgs>),
    Receive(Box<cli::receive::ReceiveArgs>),
}

fn main() -> std::process::ExitCode {
    intpath_core::logging::init("info").expect("a valid default filter");
    intpath_core::logging::exit("intpath-collector", run(Cli::parse()))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Collect(args) => {
            let links = collect::load_links(&args.topo)?;
            tokio::runtime::Runtime::new()?.block_on(collect::run_collect(*args, links))
        }
        Cmd::Receive(args) => {
            tokio::runtime::Runtime::new()?.block_on(cli::receive::run_receive(*args))
        }
    }
}
