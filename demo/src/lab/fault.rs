//! Link faults on a running network, on the egress port of the link's
//! sending switch: a rate limit (the egress queue fills and tail-drops),
//! random loss, or a delay.
//!
//! The reference switch takes all three on its admin interface
//! (`set_queue_rate`, `set_port_loss`, `set_port_delay`; p4/src/admin.rs).
//! bmv2 takes the rate through `simple_switch_CLI set_queue_rate` and has
//! no loss or delay knob, so those are `tc netem` on the switch's Mininet
//! interface (which needs the kernel's `sch_netem`).

use anyhow::{bail, Context, Result};
use intpath_core::link::DirLink;
use intpath_core::switch_map::SwitchMap;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

/// What to do to a link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkFault {
    /// Egress limited to this many packets/s.
    RatePps(u32),
    /// This percentage of the frames lost.
    LossPct(f64),
    /// Every frame held this many milliseconds.
    DelayMs(f64),
}

impl LinkFault {
    /// The same kind of fault, switched off.
    pub fn cleared(self) -> Self {
        match self {
            LinkFault::RatePps(_) => LinkFault::RatePps(0),
            LinkFault::LossPct(_) => LinkFault::LossPct(0.0),
            LinkFault::DelayMs(_) => LinkFault::DelayMs(0.0),
        }
    }
}

impl std::fmt::Display for LinkFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkFault::RatePps(r) => write!(f, "rate {r} pps"),
            LinkFault::LossPct(p) => write!(f, "loss {p} %"),
            LinkFault::DelayMs(d) => write!(f, "delay {d} ms"),
        }
    }
}

/// Sets `fault` on `link` (a [`LinkFault::cleared`] one switches it off).
pub fn apply(map: &SwitchMap, link: &DirLink, fault: LinkFault) -> Result<()> {
    let entry = map.get(&link.src).with_context(|| {
        format!(
            "{} is not a switch of the lab: a fault goes on a switch's egress port",
            link.src
        )
    })?;
    let port = link.src_port;
    if let Some(addr) = entry.admin_addr.as_deref() {
        let command = match fault {
            LinkFault::RatePps(pps) => format!("set_queue_rate {pps} {port}"),
            LinkFault::LossPct(pct) => format!("set_port_loss {pct} {port}"),
            LinkFault::DelayMs(ms) => format!("set_port_delay {ms} {port}"),
        };
        return admin_ok(&link.src, addr, &command);
    }
    match fault {
        LinkFault::RatePps(pps) => {
            // bmv2 has no "unlimited": its default rate is this high.
            let pps = if pps == 0 { BMV2_UNLIMITED_PPS } else { pps };
            let thrift = entry.thrift_port.with_context(|| {
                format!(
                    "{}: the switch map gives neither an admin address nor a Thrift port",
                    link.src
                )
            })?;
            simple_switch_cli(thrift, &link.src, &format!("set_queue_rate {pps} {port}"))
        }
        LinkFault::LossPct(p) => netem(
            link,
            (p != 0.0).then(|| ["loss", &format!("{p}%")].map(String::from)),
        ),
        LinkFault::DelayMs(ms) => netem(
            link,
            (ms != 0.0).then(|| ["delay", &format!("{ms}ms")].map(String::from)),
        ),
    }
}

/// A rate bmv2 never reaches, standing for "not limited".
const BMV2_UNLIMITED_PPS: u32 = 1_000_000;

/// `simple_switch_CLI` on the switch's Thrift port (from the switch map).
fn simple_switch_cli(thrift: u16, switch: &str, command: &str) -> Result<()> {
    let mut child = Command::new("simple_switch_CLI")
        .args(["--thrift-port", &thrift.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("cannot run simple_switch_CLI (bmv2)")?;
    if let Some(mut input) = child.stdin.take() {
        writeln!(input, "{command}")?;
    }
    let out = child.wait_with_output()?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    // The CLI exits 0 after most failures and says so in its output.
    let failed = text.lines().find(|l| {
        let l = l.trim_start();
        [
            "Error",
            "Invalid",
            "***",
            "Traceback",
            "Exception",
            "Could not connect",
        ]
        .iter()
        .any(|w| l.starts_with(w) || l.contains("Could not connect"))
    });
    if !out.status.success() || failed.is_some() {
        bail!(
            "{switch}: simple_switch_CLI {command:?} failed: {}",
            failed.unwrap_or(text.trim()).trim()
        );
    }
    Ok(())
}

/// `tc netem ARGS` on the link's source port (the switch's Mininet
/// interface, in the root namespace); `None` removes the qdisc.
fn netem(link: &DirLink, args: Option<[String; 2]>) -> Result<()> {
    let dev = crate::network::switch_port(&link.src, link.src_port);
    let mut cmd = Command::new("tc");
    match &args {
        Some(args) => cmd
            .args(["qdisc", "replace", "dev", &dev, "root", "netem"])
            .args(args),
        None => cmd.args(["qdisc", "del", "dev", &dev, "root"]),
    };
    let out = cmd.output().context("cannot run tc (iproute2)")?;
    let err = String::from_utf8_lossy(&out.stderr);
    // Removing a qdisc that is not there is what clearing wants.
    let already_clear = args.is_none() && err.contains("No such file");
    if !out.status.success() && !already_clear {
        bail!("tc netem on {dev}: {}", err.trim());
    }
    Ok(())
}

/// Sends `command` to `switch`'s admin interface and expects `ok`.
fn admin_ok(switch: &str, addr: &str, command: &str) -> Result<()> {
    let reply = admin(addr, command).with_context(|| format!("{switch} admin {addr}"))?;
    anyhow::ensure!(reply == "ok", "{switch} admin: {command}: {reply}");
    Ok(())
}

/// One command to a switch's admin interface, its one-line reply.
fn admin(addr: &str, command: &str) -> Result<String> {
    let stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    (&stream).write_all(format!("{command}\n").as_bytes())?;
    let mut reply = String::new();
    BufReader::new(&stream).read_line(&mut reply)?;
    Ok(reply.trim().to_owned())
}
