//! `intpath deploy`: install a plan on running switches over P4Runtime.

use anyhow::{Context as _, Result};
use intpath_controller::deploy::{render, ClientTls, Connection, DeployRequest, SinkMode};
use intpath_core::plan::Plan;
use intpath_core::topo::Topology;
use std::path::PathBuf;
use std::time::Duration;

/// Where the switches are and how to talk to them; shared by `deploy`,
/// `switches status` and `watch`.
#[derive(clap::Args, Clone)]
pub struct ConnectionArgs {
    /// Switch map (JSON, as the Mininet launcher writes it): name, gRPC
    /// address, device id of every switch.
    #[arg(long, value_name = "MAP")]
    pub switches: PathBuf,
    /// P4Info of the switches' program [default: the built-in sr_int.p4 one].
    #[arg(long, value_name = "FILE")]
    pub p4info: Option<PathBuf>,
    /// Election id for arbitration: the highest connected controller is
    /// primary and the only one allowed to write. Defaults to the command's
    /// own id (`intpath_core::sessions`: watch 30, deploy 20, status 1), so
    /// that two intpath sessions never refuse or overrule each other.
    #[arg(long)]
    pub election_id: Option<u64>,
    /// Seconds to wait for a switch to accept the connection.
    #[arg(long, default_value_t = 3.0)]
    pub connect_timeout: f64,
    /// Speak TLS to the switches (served with --grpc-server-ssl), their
    /// certificates signed by this CA (PEM).
    #[arg(long, value_name = "PEM")]
    pub grpc_ca: Option<PathBuf>,
    /// Our certificate (PEM), for switches started with
    /// --grpc-server-with-client-auth.
    #[arg(long, value_name = "PEM", requires_all = ["grpc_ca", "grpc_client_key"])]
    pub grpc_client_cert: Option<PathBuf>,
    /// The key of --grpc-client-cert (PEM).
    #[arg(long, value_name = "PEM", requires = "grpc_client_cert")]
    pub grpc_client_key: Option<PathBuf>,
}

impl ConnectionArgs {
    pub fn connection(&self) -> anyhow::Result<Connection> {
        let read =
            |p: &PathBuf| std::fs::read(p).with_context(|| format!("cannot read {}", p.display()));
        let tls = match &self.grpc_ca {
            None => None,
            Some(ca) => Some(ClientTls {
                ca_pem: read(ca)?,
                identity: match (&self.grpc_client_cert, &self.grpc_client_key) {
                    (Some(c), Some(k)) => Some((read(c)?, read(k)?)),
                    _ => None,
                },
                domain: None,
            }),
        };
        Ok(Connection {
            switches: self.switches.clone(),
            p4info: self.p4info.clone(),
            election_id: self.election_id,
            connect_timeout: Duration::from_secs_f64(self.connect_timeout.max(0.01)),
            tls,
        })
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// Generator expression or topology file the plan was made for.
    #[arg(long)]
    topo: String,
    /// Plan file (`intpath plan --format json`).
    #[arg(long)]
    plan: PathBuf,
    #[command(flatten)]
    conn: ConnectionArgs,
    /// Where each path's last switch sends the finished probe.
    #[arg(long, value_enum, default_value_t = Sink::Collector)]
    sink: Sink,
    /// Target config pushed with the P4Info to a switch without a pipeline
    /// (bmv2 JSON from p4c); the reference switch needs none.
    #[arg(long, value_name = "FILE")]
    device_config: Option<PathBuf>,
    /// Replace a different pipeline on a switch instead of stopping with
    /// the first differing name.
    #[arg(long)]
    replace_pipeline: bool,
    /// Print every insert / modify / delete it would make; write nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Sink {
    /// IPv4-forward the probe to its destination address (the collector).
    Collector,
    /// Hand the probe to the controller (packet-in).
    Cpu,
}

pub fn run(a: Args) -> Result<()> {
    let req = DeployRequest {
        topo: Topology::load(&a.topo)?,
        plan: Plan::load(&a.plan)?,
        connection: a.conn.connection()?,
        sink: match a.sink {
            Sink::Collector => SinkMode::Collector,
            Sink::Cpu => SinkMode::Cpu,
        },
        device_config: a.device_config,
        replace_pipeline: a.replace_pipeline,
        dry_run: a.dry_run,
    };
    let reports = super::runtime()?.block_on(req.run())?;
    super::emit(None, &render::reports(&reports, a.dry_run))
}
