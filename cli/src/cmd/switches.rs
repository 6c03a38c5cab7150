//! `intpath switches status`: what every switch of a switch map is doing.

use super::deploy::ConnectionArgs;
use anyhow::Result;
use intpath_controller::deploy::{render, StatusRequest};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Reachability, device and switch id, pipeline, primary controller,
    /// entries per table (against the plan's, when given), port and drop
    /// counters of every switch. Reads need no arbitration: it never takes
    /// over, and never collides with a running controller.
    Status(StatusArgs),
}

#[derive(clap::Args)]
struct StatusArgs {
    #[command(flatten)]
    conn: ConnectionArgs,
    /// The plan the switches should hold: entry counts are shown against
    /// it, so a switch that restarted (and lost its entries) stands out.
    #[arg(long, value_name = "FILE", requires = "topo")]
    plan: Option<PathBuf>,
    /// Generator expression or topology file the plan was made for.
    #[arg(long, requires = "plan")]
    topo: Option<String>,
}

pub fn run(a: Args) -> Result<()> {
    let Command::Status(a) = a.command;
    let planned = match (&a.plan, &a.topo) {
        (Some(plan), Some(topo)) => Some((Plan::load(plan)?, Topology::load(topo)?)),
        _ => None,
    };
    let req = StatusRequest {
        connection: a.conn.connection()?,
        planned,
    };
    let st = super::runtime()?.block_on(req.run())?;
    super::emit(None, &render::statuses(&st))?;
    let down = st.iter().filter(|s| s.error.is_some()).count();
    anyhow::ensure!(down == 0, "{down} of {} switches unreachable", st.len());
    Ok(())
}
