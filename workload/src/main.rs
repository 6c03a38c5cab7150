//! `intpath-workload`: run one HotelReservation service, or offer load to
//! the frontend.

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use intpath_workload::{load, Delay, Export, LoadConfig, Mix, Peers, ServeConfig, Server, Service};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

#[derive(Parser)]
#[command(name = "intpath-workload", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one service until SIGTERM or Ctrl-C; prints `listening on ADDR`.
    Serve(ServeArgs),
    /// Offer Poisson load to the frontend and print a summary.
    Load(LoadArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// frontend, search, geo, rate, profile or reservation.
    #[arg(long)]
    service: Service,
    /// Address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// The callees' addresses: frontend needs search, profile, reservation;
    /// search needs geo, rate. E.g. `geo=10.0.0.3:8080,rate=10.0.0.4:8080`.
    #[arg(long, default_value = "")]
    peers: Peers,
    /// Service delay fault: add this many ms ...
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// ... to this percentage of requests ...
    #[arg(long, default_value_t = 100.0)]
    delay_pct: f64,
    /// ... from this many seconds after the service starts (a fault that
    /// begins mid-run).
    #[arg(long, default_value_t = 0.0, value_name = "SECS")]
    delay_after: f64,
    /// OTLP/HTTP collector base URL (spans go to `/v1/traces`).
    #[arg(long, default_value = "http://127.0.0.1:4318")]
    otlp_endpoint: String,
    /// Record no spans (trace context still propagates).
    #[arg(long)]
    no_tracing: bool,
    /// The `host.ip` spans carry; default: the listen address.
    #[arg(long)]
    host_ip: Option<IpAddr>,
    /// Deadline of each call to a peer, in ms.
    #[arg(long, default_value_t = 5000)]
    call_timeout_ms: u64,
}

#[derive(Args)]
struct LoadArgs {
    /// The frontend's address.
    #[arg(long)]
    frontend: SocketAddr,
    /// Mean requests per second (Poisson arrivals).
    #[arg(long, default_value_t = 50.0)]
    rate: f64,
    /// Seconds of load.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Request mix weights.
    #[arg(long, default_value = "search=60,profile=30,reserve=10")]
    mix: Mix,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Per-request deadline, in ms.
    #[arg(long, default_value_t = 10_000)]
    timeout_ms: u64,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

fn main() -> std::process::ExitCode {
    intpath_core::logging::init("info").expect("a valid default filter");
    intpath_core::logging::exit("intpath-workload", run(Cli::parse()))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    match cli.command {
        Command::Serve(a) => rt.block_on(serve(a)),
        Command::Load(a) => rt.block_on(offer_load(a)),
    }
}

async fn serve(a: ServeArgs) -> anyhow::Result<()> {
    let after = Duration::try_from_secs_f64(a.delay_after)
        .with_context(|| format!("--delay-after {}: not a number of seconds", a.delay_after))?;
    let delay = (a.delay_ms > 0)
        .then(|| Delay::new(Duration::from_millis(a.delay_ms), a.delay_pct))
        .transpose()?
        .map(|d| d.starting_after(after));
    let cfg = ServeConfig {
        service: a.service,
        listen: a.listen,
        peers: a.peers,
        delay,
        export: if a.no_tracing {
            Export::Off
        } else {
            Export::Otlp(a.otlp_endpoint)
        },
        host_ip: a.host_ip,
        call_timeout: Duration::from_millis(a.call_timeout_ms),
    };
    let stop = intpath_core::shutdown::signals().context("catching SIGTERM and SIGINT")?;
    let server = Server::bind(cfg).await?;
    let addr = server.local_addr()?;
    let mut out = std::io::stdout();
    writeln!(out, "listening on {addr}")?;
    out.flush()?;
    tracing::info!(service = %a.service, %addr, "serving");
    server.run(stop).await?;
    Ok(())
}

async fn offer_load(a: LoadArgs) -> anyhow::Result<()> {
    if !(a.duration.is_finite() && a.duration > 0.0) {
        anyhow::bail!(
            "duration {} is not a positive number of seconds",
            a.duration
        );
    }
    let cfg = LoadConfig {
        frontend: a.frontend,
        rate: a.rate,
        duration: Duration::from_secs_f64(a.duration),
        mix: a.mix,
        seed: a.seed,
        timeout: Duration::from_millis(a.timeout_ms),
    };
    let summary = load::run(&cfg).await?;
    if a.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!("{summary}");
    }
    Ok(())
}
