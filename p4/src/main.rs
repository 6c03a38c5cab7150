//! `intpath-switch`: the reference switch, started like bmv2's
//! `simple_switch_grpc`.

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use intpath_switch::io::Backend;
use intpath_switch::queue::{check_settings, DEFAULT_DEPTH};
use intpath_switch::switch::{Commit, Forwarding, QueueConfig, Switch, SwitchConfig};
use intpath_switch::{admin, vectors};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::str::FromStr;

/// `PORT@IFACE`, as simple_switch's `-i`.
#[derive(Debug, Clone)]
struct PortIface {
    port: u16,
    iface: String,
}

impl FromStr for PortIface {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (port, iface) = s
            .split_once('@')
            .ok_or_else(|| format!("{s:?}: expected PORT@IFACE"))?;
        let port = port
            .parse()
            .map_err(|_| format!("{s:?}: port {port:?} is not a number"))?;
        if iface.is_empty() {
            return Err(format!("{s:?}: empty interface name"));
        }
        Ok(Self {
            port,
            iface: iface.to_string(),
        })
    }
}

/// `[PORT=]VALUE`: one port, or every port when PORT is left out.
#[derive(Debug, Clone, Copy)]
struct PortValue {
    port: Option<u16>,
    value: u64,
}

impl FromStr for PortValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (port, value) = match s.split_once('=') {
            Some((p, v)) => (
                Some(p.parse().map_err(|_| format!("{s:?}: bad port {p:?}"))?),
                v,
            ),
            None => (None, s),
        };
        let value = value
            .parse()
            .map_err(|_| format!("{s:?}: {value:?} is not a number"))?;
        Ok(Self { port, value })
    }
}

/// The intpath reference switch: executes sr_int.p4 on real interfaces and
/// serves P4Runtime, with a command line like simple_switch_grpc.
#[derive(Debug, Parser)]
#[command(
    name = "intpath-switch",
    version,
    after_help = "Target options (after `--`), as simple_switch_grpc:\n  \
                  --grpc-server-addr ADDR   P4Runtime address [default: 127.0.0.1:9559]\n  \
                  --cpu-port P              same as the option before `--`\n\n\
                  Example:\n  intpath-switch --device-id 1 -i 1@veth1 -i 2@veth2 --cpu-port 255 \\\n      \
                  --queue-rate 2=1000 -- --grpc-server-addr 127.0.0.1:50001"
)]
struct Cli {
    /// P4Runtime device id (intpath uses the topology's switch id).
    #[arg(long, default_value_t = 0)]
    device_id: u64,
    /// A data port: switch port number @ interface name. Repeat per port.
    #[arg(short = 'i', long = "interface", value_name = "PORT@IFACE")]
    interfaces: Vec<PortIface>,
    /// The CPU port: packet-in / packet-out with the controller.
    #[arg(long, value_name = "P")]
    cpu_port: Option<u16>,
    /// Log level (trace, debug, info, warn, error, off); RUST_LOG overrides.
    #[arg(long, default_value = "info")]
    log_level: String,
    /// Egress queue rate in packets/s, for one port or (no PORT=) every
    /// port; 0 = unlimited. Like bmv2's set_queue_rate. Repeatable.
    #[arg(long = "queue-rate", value_name = "[PORT=]PPS")]
    queue_rate: Vec<PortValue>,
    /// Egress queue depth in packets, for one port or every port
    /// [default: 64]. Like bmv2's set_queue_depth. Repeatable.
    #[arg(long = "queue-depth", value_name = "[PORT=]PACKETS")]
    queue_depth: Vec<PortValue>,
    /// Serve the text admin interface (set_queue_rate, set_queue_depth,
    /// set_port_loss, set_port_delay, show_queues) on this TCP address. It has no
    /// authentication, so only a loopback address is accepted unless
    /// --admin-allow-remote is given.
    #[arg(long, value_name = "ADDR")]
    admin_addr: Option<SocketAddr>,
    /// Let --admin-addr be a non-loopback address: anyone who reaches it
    /// can throttle or drop every port's traffic.
    #[arg(long)]
    admin_allow_remote: bool,
    /// Frame I/O: a receive ring shared with the kernel (TPACKET_V2) and
    /// sendmmsg, batched recvmmsg/sendmmsg, or pnet's datalink channel.
    #[arg(long = "io", value_enum, default_value = "ring")]
    backend: Backend,
    /// direct: a frame for a port without a rate limit and with an empty
    /// queue goes out from the receiving thread (no queue, no hand-off);
    /// queued: every frame through its egress queue and transmit thread.
    #[arg(long, value_enum, default_value = "direct")]
    forwarding: Forwarding,
    /// Table entries to install at start (JSON list in the test-vector entry
    /// format), for running without a controller.
    #[arg(long, value_name = "FILE")]
    entries: Option<PathBuf>,
    /// Target options after `--` (see below).
    #[arg(last = true, value_name = "TARGET OPTIONS")]
    target: Vec<String>,
}

#[derive(Debug, Parser)]
#[command(name = "target options", no_binary_name = true)]
struct TargetArgs {
    #[arg(long, default_value = "127.0.0.1:9559")]
    grpc_server_addr: SocketAddr,
    #[arg(long)]
    cpu_port: Option<u16>,
    /// simple_switch_grpc's TLS options: serve P4Runtime over TLS with this
    /// certificate and key (PEM) ...
    #[arg(long, requires_all = ["grpc_server_cert", "grpc_server_key"])]
    grpc_server_ssl: bool,
    #[arg(long, value_name = "PEM", requires = "grpc_server_ssl")]
    grpc_server_cert: Option<std::path::PathBuf>,
    #[arg(long, value_name = "PEM", requires = "grpc_server_ssl")]
    grpc_server_key: Option<std::path::PathBuf>,
    /// ... and, with --grpc-server-with-client-auth, require a client
    /// certificate signed by this CA (PEM).
    #[arg(long, value_name = "PEM", requires = "grpc_server_ssl")]
    grpc_server_cacert: Option<std::path::PathBuf>,
    #[arg(long, requires = "grpc_server_cacert")]
    grpc_server_with_client_auth: bool,
}

impl TargetArgs {
    /// The TLS the target options ask for (none without --grpc-server-ssl).
    fn tls(&self) -> Result<Option<tonic::transport::ServerTlsConfig>> {
        use tonic::transport::{Certificate, Identity, ServerTlsConfig};
        let (Some(cert), Some(key)) = (&self.grpc_server_cert, &self.grpc_server_key) else {
            return Ok(None);
        };
        let read = |p: &std::path::Path| {
            std::fs::read(p).with_context(|| format!("reading {}", p.display()))
        };
        let mut tls = ServerTlsConfig::new().identity(Identity::from_pem(read(cert)?, read(key)?));
        if let Some(ca) = &self.grpc_server_cacert {
            tls = tls
                .client_ca_root(Certificate::from_pem(read(ca)?))
                .client_auth_optional(!self.grpc_server_with_client_auth);
        }
        Ok(Some(tls))
    }
}

const DEFAULT_CPU_PORT: u16 = 255;

/// Default and per-port queue settings from the repeated flags.
fn queue_settings(cli: &Cli) -> Result<(QueueConfig, Vec<(u16, QueueConfig)>)> {
    let mut default = QueueConfig {
        rate_pps: 0,
        depth: DEFAULT_DEPTH,
    };
    for r in cli.queue_rate.iter().filter(|r| r.port.is_none()) {
        default.rate_pps = r.value;
    }
    for d in cli.queue_depth.iter().filter(|d| d.port.is_none()) {
        default.depth = usize::try_from(d.value).unwrap_or(usize::MAX);
    }
    let mut overrides: Vec<(u16, QueueConfig)> = Vec::new();
    fn slot(
        overrides: &mut Vec<(u16, QueueConfig)>,
        port: u16,
        default: QueueConfig,
    ) -> &mut QueueConfig {
        let i = match overrides.iter().position(|(p, _)| *p == port) {
            Some(i) => i,
            None => {
                overrides.push((port, default));
                overrides.len() - 1
            }
        };
        &mut overrides[i].1
    }
    for r in &cli.queue_rate {
        if let Some(p) = r.port {
            slot(&mut overrides, p, default).rate_pps = r.value;
        }
    }
    for d in &cli.queue_depth {
        if let Some(p) = d.port {
            slot(&mut overrides, p, default).depth = usize::try_from(d.value).unwrap_or(usize::MAX);
        }
    }
    check_settings(default.rate_pps, default.depth)
        .map_err(|e| anyhow!("--queue-rate / --queue-depth: {e}"))?;
    for (p, q) in &overrides {
        check_settings(q.rate_pps, q.depth)
            .map_err(|e| anyhow!("--queue-rate / --queue-depth of port {p}: {e}"))?;
    }
    Ok((default, overrides))
}

fn load_entries(path: &PathBuf) -> Result<Vec<vectors::JsonEntry>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not a JSON list of entries", path.display()))
}

fn main() -> std::process::ExitCode {
    intpath_core::logging::exit("intpath-switch", run())
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    let target = TargetArgs::try_parse_from(&cli.target).context("target options after `--`")?;
    intpath_core::logging::init(&cli.log_level).context("--log-level")?;

    let cpu_port = match (cli.cpu_port, target.cpu_port) {
        (Some(a), Some(b)) if a != b => bail!("--cpu-port given twice: {a} and {b}"),
        (a, b) => a.or(b).unwrap_or(DEFAULT_CPU_PORT),
    };
    let (default_queue, queue_overrides) = queue_settings(&cli)?;
    let entries = cli.entries.as_ref().map(load_entries).transpose()?;
    let config = SwitchConfig {
        cpu_port,
        ports: cli
            .interfaces
            .iter()
            .map(|p| (p.port, p.iface.clone()))
            .collect(),
        backend: cli.backend,
        forwarding: cli.forwarding,
        default_queue,
        queue_overrides,
    };
    let (switch, packet_in) = Switch::start(config)?;
    if let Some(entries) = entries {
        let writes = entries
            .iter()
            .map(|e| e.to_write().map_err(anyhow::Error::from))
            .collect::<Result<Vec<_>>>()?;
        for (r, e) in switch
            .core
            .write(&writes, Commit::Always)
            .into_iter()
            .zip(&entries)
        {
            r.with_context(|| format!("entry for {}", e.table))?;
        }
        tracing::info!("{} table entries installed", entries.len());
    }
    if let Some(addr) = cli.admin_addr {
        if !addr.ip().is_loopback() && !cli.admin_allow_remote {
            bail!(
                "--admin-addr {addr}: the admin interface is unauthenticated; \
                 bind a loopback address or add --admin-allow-remote"
            );
        }
        let listener = TcpListener::bind(addr).with_context(|| format!("admin address {addr}"))?;
        admin::spawn(switch.core.clone(), listener);
    }
    tracing::info!(
        device_id = cli.device_id,
        cpu_port,
        ports = cli.interfaces.len(),
        grpc = %target.grpc_server_addr,
        "switch running"
    );
    let tls = target.tls()?;
    if tls.is_none() && !target.grpc_server_addr.ip().is_loopback() {
        tracing::warn!(
            "P4Runtime on {}: plaintext on an address other than loopback, anyone who reaches \
             it can become primary and rewrite the tables; give --grpc-server-ssl (and \
             --grpc-server-with-client-auth)",
            target.grpc_server_addr
        );
    }
    intpath_switch::server::serve(
        switch,
        packet_in,
        cli.device_id,
        target.grpc_server_addr,
        tls,
    )
}
