//! `intpath-collector receive`, and the OTLP flags `collect` shares: spans
//! over OTLP/HTTP (and OTLP/gRPC when asked) into the telemetry database.

use anyhow::Context;
use clap::Args;
use intpath_collector::otlp::{self, ExportConfig, Receiver};
use intpath_diagnose::export::Endpoint;
use intpath_store::{Db, Store};
use std::net::SocketAddr;
use std::time::Duration;

/// Receive OpenTelemetry spans (OTLP/HTTP `POST /v1/traces`, and OTLP/gRPC
/// with --otlp-grpc-listen) into the telemetry database until SIGINT or
/// SIGTERM.
#[derive(Debug, Clone, Args)]
pub struct ReceiveArgs {
    /// Telemetry database (created if missing): a SQLite file or a
    /// `postgres://` URL.
    #[arg(long, default_value = "telemetry.db")]
    pub db: Db,
    #[command(flatten)]
    pub otlp: OtlpArgs,
}

#[derive(Debug, Clone, Args)]
pub struct OtlpArgs {
    /// Receive OTLP/HTTP traces on this address (`receive`: default
    /// 127.0.0.1:4318; `collect`: only when given, or on that default when
    /// only --otlp-grpc-listen is).
    #[arg(long)]
    pub otlp_listen: Option<SocketAddr>,
    /// Also receive OTLP/gRPC traces on this address (the standard port is
    /// 4317: `--otlp-grpc-listen 127.0.0.1:4317`).
    #[arg(long)]
    pub otlp_grpc_listen: Option<SocketAddr>,
    /// Largest OTLP request body in bytes, compressed or decompressed.
    #[arg(long, default_value_t = 16 << 20)]
    pub otlp_max_body: usize,
    #[command(flatten)]
    pub limits: super::serve::LimitArgs,
    /// Diagnose the traces received and send them on to this OTLP/HTTP
    /// endpoint (`http://HOST:4318`, or its full `/v1/traces` URL) with the
    /// diagnosis as span attributes (`intpath.blame`, `intpath.network_ms`,
    /// `intpath.queueing_ms`, `intpath.culprit`, the links crossed), as
    /// `intpath diagnose --export-otlp` does. Each span is sent once; a
    /// backend that is down is retried next round.
    #[arg(long, value_name = "URL")]
    pub export_otlp: Option<Endpoint>,
    /// With --export-otlp: seconds between export rounds.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = seconds)]
    pub export_every: Duration,
    /// With --export-otlp: a trace is diagnosed and sent once none of its
    /// spans arrived for this many seconds.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = seconds)]
    pub export_quiet: Duration,
}

/// A positive number of seconds.
fn seconds(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 86_400.0 => Ok(Duration::from_secs_f64(x)),
        _ => Err(format!(
            "{s}: expected a number of seconds above 0, at most a day"
        )),
    }
}

impl OtlpArgs {
    /// Starts a receiver on its own connection to `db`, if one is asked for
    /// (or `always`, on the default address).
    pub async fn start(&self, db: &Db, always: bool) -> anyhow::Result<Option<Receiver>> {
        let listen = match self.otlp_listen {
            Some(a) => a,
            None if always || self.otlp_grpc_listen.is_some() => otlp::DEFAULT_LISTEN.parse()?,
            None if self.export_otlp.is_some() => {
                anyhow::bail!("--export-otlp sends on the spans received: give --otlp-listen too")
            }
            None => return Ok(None),
        };
        let export = self.export_otlp.clone().map(|url| ExportConfig {
            every: self.export_every,
            quiet: self.export_quiet,
            ..ExportConfig::new(url)
        });
        let cfg = otlp::Config {
            listen,
            grpc_listen: self.otlp_grpc_listen,
            max_body: self.otlp_max_body,
            limits: self.limits.limits(),
            tls: self.limits.tls()?,
            export,
            ..otlp::Config::default()
        };
        let store = Store::open(db).await?;
        Ok(Some(Receiver::start(store, cfg).await?))
    }
}

/// Stops a receiver and prints what it stored; an error, after the
/// summary, when spans were lost.
async fn stop(r: Receiver) -> anyhow::Result<()> {
    let summary = r.shutdown().await?;
    println!("{}", serde_json::to_string(&summary)?);
    Ok(summary.check()?)
}

pub async fn run_receive(args: ReceiveArgs) -> anyhow::Result<()> {
    let signal = intpath_core::shutdown::signals().context("cannot catch signals")?;
    let r = args
        .otlp
        .start(&args.db, true)
        .await?
        .context("no receiver")?;
    signal.await;
    tracing::info!("stopping: storing buffered spans");
    stop(r).await
}
