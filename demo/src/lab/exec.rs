//! `intpath lab exec`: a command in a host's network namespace, set up so
//! that an unmodified OpenTelemetry application exports to the lab and is
//! placed on its host: `OTEL_EXPORTER_OTLP_ENDPOINT` is the lab's receiver,
//! and `OTEL_RESOURCE_ATTRIBUTES` starts with `host.name` and `host.ip`
//! (attributes the user set come after them, so theirs win).

use super::state::{start_time, write_json, LabDir, LabHost, LabState, UserProc};
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};

/// One `lab exec`.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// Host name or address.
    pub host: String,
    /// The program and its arguments.
    pub argv: Vec<OsString>,
    /// Return at once and keep the process until `lab down`.
    pub detach: bool,
}

/// What became of the command.
#[derive(Debug)]
pub enum Executed {
    /// It ran in the foreground and ended so.
    Exited(ExitStatus),
    /// It runs on, its output in `log`.
    Detached { pid: u32, log: PathBuf },
}

/// Runs `req` in the lab that runs in `dir`.
pub fn exec(dir: &LabDir, req: &ExecRequest) -> Result<Executed> {
    anyhow::ensure!(!req.argv.is_empty(), "no command to run");
    let state = dir.running_state()?;
    let host = state.host(&req.host)?;
    let mut cmd = command(&state, host, &req.argv);
    if !req.detach {
        let status = cmd
            .status()
            .with_context(|| format!("cannot run {:?} on {}", req.argv[0], host.name))?;
        return Ok(Executed::Exited(status));
    }
    std::fs::create_dir_all(dir.procs())?;
    let program = PathBuf::from(&req.argv[0]);
    let stem = program
        .file_name()
        .map_or("cmd".into(), |n| n.to_string_lossy().into_owned());
    let log = unused(&dir.logs(), &format!("{}-{stem}", host.name));
    let out =
        std::fs::File::create(&log).with_context(|| format!("{}: cannot create", log.display()))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out.try_clone()?))
        .stderr(Stdio::from(out));
    // SAFETY: setsid is async-signal-safe and touches no shared memory.
    unsafe {
        // Its own session and process group: `lab down` signals the group,
        // and the terminal's Ctrl-C or hang-up does not reach it.
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot run {:?} on {}", req.argv[0], host.name))?;
    let pid = child.id();
    let record = UserProc {
        pid,
        start_time: start_time(pid).unwrap_or_default(),
        host: host.name.clone(),
        argv: req
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        log: log.clone(),
    };
    write_json(&dir.procs().join(format!("{pid}.json")), &record)?;
    Ok(Executed::Detached { pid, log })
}

/// `argv` inside `host`'s network namespace with the lab's OpenTelemetry
/// environment (nsenter execs the program, so its pid is the command's).
fn command(state: &LabState, host: &LabHost, argv: &[OsString]) -> Command {
    let mut cmd = Command::new("nsenter");
    cmd.arg(format!("--net=/proc/{}/ns/net", host.pid))
        .arg("--")
        .args(argv)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &state.otlp_endpoint)
        .env("OTEL_RESOURCE_ATTRIBUTES", resource_attributes(host));
    cmd
}

/// `host.name=…,host.ip=…`, then whatever the caller's environment adds.
fn resource_attributes(host: &LabHost) -> String {
    let ours = format!("host.name={},host.ip={}", host.name, host.ip);
    match std::env::var("OTEL_RESOURCE_ATTRIBUTES") {
        Ok(theirs) if !theirs.trim().is_empty() => format!("{ours},{theirs}"),
        _ => ours,
    }
}

/// `DIR/NAME.log`, or `NAME-2.log`, … if taken.
fn unused(dir: &std::path::Path, name: &str) -> PathBuf {
    let first = dir.join(format!("{name}.log"));
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|i| dir.join(format!("{name}-{i}.log")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}
