//! `intpath-collector`: the capture daemon, plus the heatmap and query
//! commands the `intpath` CLI also offers.

mod cli;

use clap::{Parser, Subcommand};
use cli::collect::{self, CollectArgs};
use intpath_collector::flags::{self, HeatmapArgs, QueryArgs};

#[derive(Debug, Parser)]
#[command(
    version,
    about = "Collect SR-INT probes into SQLite; receive OTLP traces; draw heatmaps; query telemetry"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    // Boxed: its flags outweigh the other commands' several times over.
    Collect(Box<CollectArgs>),
    Heatmap(HeatmapArgs),
    Query(QueryArgs),
    Receive(cli::receive::ReceiveArgs),
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
        Cmd::Heatmap(args) => flags::run_heatmap(args),
        Cmd::Query(args) => flags::run_query(args),
        Cmd::Receive(args) => {
            tokio::runtime::Runtime::new()?.block_on(cli::receive::run_receive(args))
        }
    }
}
