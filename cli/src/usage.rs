//! The `Usage:` line of a command-line mistake. clap writes the flags the
//! user gave into it, so `intpath plan --topo T --format x` answered
//! `Usage: intpath plan --topo <TOPO> --format <FORMAT>`, as if `--format`
//! were required; the usage of the command itself says which flags are.

use clap::error::{ContextKind, ContextValue};
use clap::{Command, Error};

/// `e` with its usage line replaced by that of the (sub)command the
/// arguments of this process name in `cli`.
pub fn plain(mut e: Error, mut cli: Command) -> Error {
    if e.get(ContextKind::Usage).is_none() {
        return e;
    }
    cli.build();
    let mut cmd = &mut cli;
    for arg in std::env::args().skip(1) {
        match cmd.find_subcommand(&arg).map(|c| c.get_name().to_owned()) {
            Some(name) => cmd = cmd.find_subcommand_mut(name).expect("just found"),
            None => continue,
        }
    }
    e.insert(
        ContextKind::Usage,
        ContextValue::StyledStr(cmd.render_usage()),
    );
    e
}
