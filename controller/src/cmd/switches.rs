//! `intpath switches status`: what every switch of a switch map is doing.

use super::deploy::{runtime, Connection};
use anyhow::Result;
use intpath::deploy::{self, SwitchStatus};
use intpath_p4rt::client::Arbitration;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Reachability, primary controller, entries per table, port and drop
    /// counters of every switch (asks as an observer: never takes over).
    Status(Connection),
}

pub fn run(a: Args) -> Result<()> {
    let Command::Status(conn) = a.command;
    let (map, ix) = conn.load()?;
    let st = runtime()?.block_on(deploy::status(ix, &map, &conn.options()));
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
        let primary = match s.arbitration {
            Some(Arbitration::Backup { primary: 0 }) | Some(Arbitration::Primary) => {
                "no controller".to_owned()
            }
            Some(Arbitration::Backup { primary }) => format!("primary election id {primary}"),
            _ => "arbitration unknown".to_owned(),
        };
        let entries: Vec<String> = s
            .entries
            .iter()
            .map(|(t, n)| format!("{}={n}", t.rsplit('.').next().unwrap_or(t)))
            .collect();
        out.push_str(&format!(
            "{:<8} {:<21} up, {primary}, entries {}\n",
            s.name,
            s.addr,
            entries.join(" ")
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
