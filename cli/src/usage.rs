//! What a command-line mistake says. The `Usage:` line: clap writes the
//! flags the user gave into it, so `intpath plan --topo T --format x`
//! answered `Usage: intpath plan --topo <TOPO> --format <FORMAT>`, as if
//! `--format` were required; the usage of the command itself says which
//! flags are. And a subcommand this build leaves out, which clap would
//! call unknown.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Command, Error};

/// For a subcommand a build without default features leaves out (the
/// README's first look builds `--no-default-features`), the one line that
/// says so and how to build it; `None` for any other mistake.
pub fn left_out(e: &Error) -> Option<String> {
    if e.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(name)) = e.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let feature = match name.as_str() {
        "demo" | "lab" | "deploy" | "switches" | "watch" if cfg!(not(feature = "lab")) => "lab",
        "serve" if cfg!(not(feature = "web")) => "web",
        _ => return None,
    };
    Some(format!(
        "`intpath {name}` is not in this build (built without the `{feature}` feature); \
         `cargo build --release --locked --bin intpath` builds every command"
    ))
}

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
