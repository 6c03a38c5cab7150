//! `intpath completions SHELL` and `intpath man --out DIR`: shell
//! completions and man pages generated from the clap definition itself, so
//! they never drift from the flags.

use anyhow::{Context, Result};
use clap_complete::Shell;
use std::path::{Path, PathBuf};

/// Print a completion script for a shell.
#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell. Bash: `intpath completions
    /// bash > /etc/bash_completion.d/intpath`; zsh: into a directory of
    /// `$fpath` as `_intpath`.
    shell: Shell,
}

/// Write man pages: intpath.1 and one per subcommand (intpath-query.1, …).
#[derive(clap::Args)]
pub struct ManArgs {
    /// Directory to write into (created if missing); read them with
    /// `man -l DIR/intpath.1`, or put DIR on MANPATH's man1.
    #[arg(long)]
    out: PathBuf,
}

pub fn completions(a: CompletionsArgs, mut cli: clap::Command) -> Result<()> {
    let name = cli.get_name().to_owned();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cli, name, &mut script);
    super::emit(None, &String::from_utf8(script)?)
}

pub fn man(a: ManArgs, cli: clap::Command) -> Result<()> {
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("{}: cannot create", a.out.display()))?;
    write_pages(&a.out, cli).with_context(|| format!("{}: cannot write", a.out.display()))?;
    println!("{}", a.out.join("intpath.1").display());
    Ok(())
}

fn write_pages(dir: &Path, cli: clap::Command) -> std::io::Result<()> {
    clap_mangen::generate_to(cli, dir)
}
