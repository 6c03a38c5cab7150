//! `intpath`: topologies, probe path plans and their evaluation. Each
//! subcommand lives in its own module under `cmd/`.

mod cmd;
mod usage;
use clap::{CommandFactory, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "intpath",
    version,
    propagate_version = true,
    about = "Network-wide in-band telemetry with planned SR-INT probe paths"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect and convert topologies.
    Topo(cmd::topo::Args),
    /// Plan probe paths covering every link, or check a plan.
    Plan(cmd::plan::Args),
    /// Regenerate the INT-path paper's evaluation (CSV and PNG).
    Eval(cmd::eval::Args),
    /// Draw telemetry heatmaps from the collector's database.
    Heatmap(cmd::heatmap::Args),
    /// Query the collector's telemetry database.
    Query(cmd::query::Args),
    /// Install a plan on running switches (P4Runtime): minimal diff, --dry-run.
    #[cfg(feature = "lab")]
    Deploy(cmd::deploy::Args),
    /// Inspect the switches of a switch map.
    #[cfg(feature = "lab")]
    Switches(cmd::switches::Args),
    /// Keep coverage under failure: replan and redeploy when a switch stops
    /// answering or a path's probes stop arriving over a broken link.
    #[cfg(feature = "lab")]
    Watch(cmd::watch::Args),
    /// Run the whole loop in Mininet: plan, deploy, probe a congested
    /// FatTree, collect, draw heatmaps and name the hottest link (root).
    #[cfg(feature = "lab")]
    Demo(cmd::demo::Args),
    /// Keep an emulated network up for your own application: run commands
    /// on its hosts, break links, diagnose (root).
    #[cfg(feature = "lab")]
    Lab(cmd::lab::Args),
    /// Diagnose slow requests: spans (OTLP, Jaeger, Zipkin) joined with INT
    /// telemetry; culprit links, services and hosts; synthetic workloads.
    Diagnose(cmd::diagnose::Args),
    /// Serve a live web view of a telemetry database: heatmaps, topology,
    /// probe paths, runs and the diagnosis (read-only, loopback by default).
    #[cfg(feature = "web")]
    Serve(cmd::serve::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::docs::CompletionsArgs),
    /// Write the man pages (intpath.1 and one per subcommand).
    Man(cmd::docs::ManArgs),
}

fn main() -> std::process::ExitCode {
    intpath_core::logging::init("info").expect("a valid default filter");
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match usage::left_out(&e) {
            Some(line) => {
                eprintln!("intpath: {line}");
                return std::process::ExitCode::from(2);
            }
            None => usage::plain(e, Cli::command()).exit(),
        },
    };
    intpath_core::logging::exit("intpath", run(cli))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Topo(a) => cmd::topo::run(a),
        Command::Plan(a) => cmd::plan::run(a),
        Command::Eval(a) => cmd::eval::run(a),
        Command::Heatmap(a) => cmd::heatmap::run(a),
        Command::Query(a) => cmd::query::run(a),
        #[cfg(feature = "lab")]
        Command::Deploy(a) => cmd::deploy::run(a),
        #[cfg(feature = "lab")]
        Command::Switches(a) => cmd::switches::run(a),
        #[cfg(feature = "lab")]
        Command::Watch(a) => cmd::watch::run(a),
        #[cfg(feature = "lab")]
        Command::Demo(a) => cmd::demo::run(a),
        #[cfg(feature = "lab")]
        Command::Lab(a) => cmd::lab::run(a),
        Command::Diagnose(a) => cmd::diagnose::run(a),
        #[cfg(feature = "web")]
        Command::Serve(a) => cmd::serve::run(a),
        Command::Completions(a) => cmd::docs::completions(a, Cli::command()),
        Command::Man(a) => cmd::docs::man(a, Cli::command()),
    }
}
