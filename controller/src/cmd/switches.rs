//! `intpath switches status`: what every switch of a switch map is doing.

use super::deploy::{check_map, runtime, Connection};
use anyhow::Result;
use intpath::deploy::{self, host_routes, Pipeline, SinkMode, StatusQuery, SwitchStatus};
use intpath_core::plan::Plan;
use intpath_core::sessions;
use intpath_core::topo::Topology;
use intpath_p4rt::client::Arbitration;
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
    conn: Connection,
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
    let (map, ix) = a.conn.load()?;
    let intents = match (&a.plan, &a.topo) {
        (Some(plan), Some(topo)) => {
            let topo = Topology::load(topo)?;
            check_map(&topo, &map, &a.conn.switches)?;
            let plan = Plan::load(plan)?;
            Some(deploy::intents(
                &plan,
                &map,
                host_routes(&topo),
                SinkMode::Collector,
            )?)
        }
        _ => None,
    };
    let query = StatusQuery {
        arbitrate_as: Some(a.conn.options(sessions::OBSERVER).election_id),
        intents,
    };
    let st = runtime()?.block_on(deploy::status(ix, &map, &a.conn.options(0), &query));
    print!("{}", render(&st));
    let down = st.iter().filter(|s| s.error.is_some()).count();
    anyhow::ensure!(down == 0, "{down} of {} switches unreachable", st.len());
    Ok(())
}

fn render(st: &[SwitchStatus]) -> String {
    let mut out = String::new();
    for s in st {
        if let Some(e) = &s.error {
            out.push_str(&format!("{:<8} {:<21} DOWN: {e}\n", s.name, s.addr));
            continue;
        }
        let primary = match &s.arbitration {
            Some(Ok(Arbitration::Backup { primary: 0 } | Arbitration::Primary)) => {
                "no controller".to_owned()
            }
            Some(Ok(Arbitration::Backup { primary })) => format!("primary election id {primary}"),
            Some(Err(e)) => format!("primary unknown ({e})"),
            _ => "arbitration unknown".to_owned(),
        };
        let pipeline = match &s.pipeline {
            Some(Pipeline::Ours { cookie: 0 }) => {
                "sr_int pipeline (built in, no cookie)".to_owned()
            }
            Some(Pipeline::Ours { cookie }) => format!("sr_int pipeline (cookie {cookie})"),
            Some(Pipeline::Other) => "ANOTHER pipeline".to_owned(),
            Some(Pipeline::None) | None => "NO pipeline".to_owned(),
        };
        let switch_id = s
            .switch_id
            .map_or("switch id UNSET".to_owned(), |id| format!("switch id {id}"));
        let entries: Vec<String> = s
            .entries
            .iter()
            .enumerate()
            .map(|(i, (t, n))| {
                let short = t.rsplit('.').next().unwrap_or(t);
                match s.planned.get(i) {
                    Some((_, want)) => format!("{short}={n}/{want}"),
                    None => format!("{short}={n}"),
                }
            })
            .collect();
        out.push_str(&format!(
            "{:<8} {:<21} up, device {}, {switch_id}, {pipeline}, {primary}, entries {}{}\n",
            s.name,
            s.addr,
            s.device_id,
            entries.join(" "),
            if s.differs_from_plan() {
                " (NOT AS PLANNED: restarted or not deployed?)"
            } else {
                ""
            }
        ));
        for (port, rx, tx) in &s.ports {
            out.push_str(&format!("    port {port:>3}: rx {rx} tx {tx} packets\n"));
        }
        for (reason, packets) in &s.drops {
            let why = u64::try_from(*reason)
                .ok()
                .and_then(intpath_sr_int::DropReason::from_index)
                .map_or("unused index", |r| r.describe());
            out.push_str(&format!(
                "    drops reason {reason} ({why}): {packets} packets\n"
            ));
        }
    }
    out
}
