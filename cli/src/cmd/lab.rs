//! `intpath lab`: the emulated network kept up for the user's own
//! application (`intpath_demo::lab`), one shell command at a time.

use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use intpath_demo::lab::{self, ExecRequest, Executed, LabConfig, LabDir, LinkFault};
use intpath_demo::SwitchKind;
use intpath_store::Db;
use intpath_web::ServeConfig;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct DirArg {
    /// The lab's directory: its state, logs and telemetry database.
    #[arg(long, default_value = "intpath-lab")]
    dir: PathBuf,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Start the network, deploy, start the collector (OTLP/HTTP on port
    /// 4318 of its host) and the probes; return once everything is ready.
    Up(UpArgs),
    /// Run a command in a host's network namespace, with
    /// OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_RESOURCE_ATTRIBUTES
    /// (host.name, host.ip) set for it.
    Exec(ExecArgs),
    /// The links a packet from SRC to DST crosses, and those of the reply.
    Route(RouteArgs),
    /// Break a link (on its sending switch's egress port), or clear every
    /// fault set.
    Fault(FaultArgs),
    /// What runs: the lab, your processes, the faults in force.
    Status(StatusArgs),
    /// `intpath diagnose culprits` on the lab's run (its database, every
    /// span since `up`, unless --since/--until/--run say otherwise).
    Diagnose(DiagnoseArgs),
    /// Stop your processes (SIGTERM), then the collector, probes and
    /// network; also clears what a killed lab left.
    Down(DirArg),
    /// The lab's supervisor (started by `up`).
    #[command(hide = true)]
    Supervise(SuperviseArgs),
}

#[derive(clap::Args)]
struct UpArgs {
    #[command(flatten)]
    dir: DirArg,
    /// Topology: generator expression or file.
    #[arg(long, default_value = "fattree:k=4")]
    topo: String,
    #[command(flatten)]
    hosts: super::hosts::HostArgs,
    /// reference: the intpath reference switch; bmv2: simple_switch_grpc
    /// (needs --device-config).
    #[arg(long, value_enum, default_value_t = Switch::Reference)]
    switch: Switch,
    /// bmv2 JSON compiled from p4/sr_int.p4 (`make -C p4`).
    #[arg(long, value_name = "FILE")]
    device_config: Option<PathBuf>,
    /// Probes per path per second [default: 50; 20 with --switch bmv2].
    #[arg(long)]
    probe_pps: Option<f64>,
    /// Background UDP packets/s each host sends to the others (Poisson); 0
    /// for none [default: 20; 5 with --switch bmv2].
    #[arg(long)]
    traffic_pps: Option<f64>,
    /// Egress queue depth of every switch port, packets.
    #[arg(long, default_value_t = 64)]
    queue_depth: u32,
    /// The host of the collector and its OTLP receiver [default: one on no
    /// probe path's first switch].
    #[arg(long)]
    collector_host: Option<String>,
    /// Serve the live web view of the lab (`intpath serve`) on this
    /// address while it runs [default address: 127.0.0.1:8088].
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = intpath_web::DEFAULT_LISTEN)]
    web: Option<SocketAddr>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::Args)]
struct SuperviseArgs {
    #[command(flatten)]
    dir: DirArg,
    #[arg(long)]
    web: Option<SocketAddr>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Switch {
    Reference,
    Bmv2,
}

#[derive(clap::Args)]
struct ExecArgs {
    #[command(flatten)]
    dir: DirArg,
    /// Return at once; the command runs until it ends or `lab down`
    /// (SIGTERM first), its output in DIR/logs/HOST-PROGRAM.log.
    #[arg(long)]
    detach: bool,
    /// Host name (h1) or address.
    host: String,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true)]
    command: Vec<OsString>,
}

#[derive(clap::Args)]
struct RouteArgs {
    #[command(flatten)]
    dir: DirArg,
    /// Host name or address.
    src: String,
    dst: String,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::Args)]
struct FaultArgs {
    #[command(flatten)]
    dir: DirArg,
    #[command(subcommand)]
    what: FaultCommand,
}

#[derive(Subcommand)]
enum FaultCommand {
    /// One fault on LINK (as `lab route` names it, e.g. s13:1->s15).
    Link(LinkFaultArgs),
    /// Switch off every fault set with `lab fault link`.
    Clear,
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("kind").required(true).args(["rate", "loss", "delay_ms"])))]
struct LinkFaultArgs {
    link: String,
    /// Limit the link's egress to PPS packets/s (its queue fills, then
    /// tail-drops); 0 lifts the limit.
    #[arg(long, value_name = "PPS")]
    rate: Option<u32>,
    /// Lose PCT % of the link's frames at random (0–100).
    #[arg(long, value_name = "PCT")]
    loss: Option<f64>,
    /// Hold every frame MS milliseconds on the link.
    #[arg(long, value_name = "MS")]
    delay_ms: Option<f64>,
}

#[derive(clap::Args)]
struct StatusArgs {
    #[command(flatten)]
    dir: DirArg,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::Args)]
struct DiagnoseArgs {
    #[command(flatten)]
    dir: DirArg,
    #[command(flatten)]
    culprits: super::diagnose::CulpritArgs,
}

pub fn run(a: Args) -> Result<()> {
    match a.command {
        Command::Up(u) => up(u),
        Command::Exec(e) => exec(e),
        Command::Route(r) => {
            let route = lab::route(&LabDir::new(&r.dir.dir), &r.src, &r.dst)?;
            let text = match r.format {
                Format::Json => serde_json::to_string_pretty(&route)? + "\n",
                Format::Text => {
                    let names = |links: &[intpath_core::link::DirLink]| {
                        links
                            .iter()
                            .map(|l| l.to_string())
                            .collect::<Vec<_>>()
                            .join("  ")
                    };
                    format!(
                        "request {} -> {}: {}\nreply   {} -> {}: {}\n",
                        route.src,
                        route.dst,
                        names(&route.request),
                        route.dst,
                        route.src,
                        names(&route.reply)
                    )
                }
            };
            super::emit(None, &text)
        }
        Command::Fault(f) => {
            let dir = LabDir::new(&f.dir.dir);
            match f.what {
                FaultCommand::Link(l) => {
                    let fault = match (l.rate, l.loss, l.delay_ms) {
                        (Some(r), _, _) => LinkFault::RatePps(r),
                        (_, Some(p), _) => LinkFault::LossPct(p),
                        (_, _, Some(ms)) => LinkFault::DelayMs(ms),
                        _ => anyhow::bail!("say which fault: --rate, --loss or --delay-ms"),
                    };
                    let link = lab::fault(&dir, &l.link, fault)?;
                    println!("{link}: {fault}");
                }
                FaultCommand::Clear => {
                    let cleared = lab::clear(&dir)?;
                    for r in &cleared {
                        println!("{}: {} cleared", r.link, r.fault);
                    }
                    if cleared.is_empty() {
                        println!("no fault was set");
                    }
                }
            }
            Ok(())
        }
        Command::Status(s) => status(s),
        Command::Diagnose(mut d) => {
            let state = LabDir::new(&d.dir.dir).running_state().or_else(|_| {
                // A lab already down still has its database and run.
                lab::state::read_json::<lab::LabState>(&d.dir.dir.join("lab.json"))
            })?;
            let diag = &mut d.culprits.diag;
            if diag.db.is_none() {
                diag.db = Some(state.db());
            }
            let picked = diag.run.is_some()
                || diag.since.is_some()
                || diag.until.is_some()
                || diag.all_spans;
            if !picked {
                diag.run = Some(state.run);
            }
            super::diagnose::culprits(d.culprits)
        }
        Command::Down(d) => {
            let report = lab::down(&LabDir::new(&d.dir))?;
            println!("lab down ({}): {report}", d.dir.display());
            Ok(())
        }
        Command::Supervise(s) => supervise(s),
    }
}

/// The supervisor, with the lab's web view served from it (so the page
/// lives exactly as long as the lab) when `up` asked for one.
fn supervise(s: SuperviseArgs) -> Result<()> {
    let dir = LabDir::new(&s.dir.dir);
    let web = match s.web {
        Some(listen) => Some(super::serve::in_background(ServeConfig {
            listen,
            ..ServeConfig::new(Db::Sqlite(dir.database()))
        })?),
        None => None,
    };
    lab::supervise(&dir, web.as_ref().map(|w| w.url.clone()))
}

fn up(u: UpArgs) -> Result<()> {
    let dir = LabDir::new(&u.dir.dir);
    let switch = match u.switch {
        Switch::Reference => SwitchKind::Soft,
        Switch::Bmv2 => SwitchKind::Bmv2,
    };
    let rates = switch.lab_rates();
    let config = LabConfig {
        topo: u.topo,
        add_hosts: u.hosts.add_hosts(),
        switch,
        device_config: u.device_config.map(std::path::absolute).transpose()?,
        probe_pps: u.probe_pps.unwrap_or(rates.probe_pps),
        traffic_pps: u.traffic_pps.unwrap_or(rates.traffic_pps),
        queue_depth: u.queue_depth,
        collector_host: u.collector_host,
    };
    let mut supervisor = std::process::Command::new(std::env::current_exe()?);
    supervisor
        .args(["lab", "supervise", "--dir"])
        .arg(&u.dir.dir);
    if let Some(web) = u.web {
        supervisor.arg("--web").arg(web.to_string());
    }
    let state = lab::up(&dir, &config, supervisor)?;
    if u.format == Format::Json {
        return super::emit(None, &(serde_json::to_string_pretty(&state)? + "\n"));
    }
    let d = u.dir.dir.display();
    println!(
        "lab up in {d}: {} ({} switches, {} hosts, {} switch)",
        state.topology,
        state.switches.len(),
        state.hosts.len(),
        match state.switch {
            SwitchKind::Soft => "reference",
            SwitchKind::Bmv2 => "bmv2",
        }
    );
    println!(
        "OTLP endpoint  {} (collector on {})",
        state.otlp_endpoint, state.collector.name
    );
    println!(
        "database       {} (run {})",
        state.database.display(),
        state.run
    );
    if let Some(web) = &state.web {
        println!("web view       {web}");
    }
    let hosts: Vec<String> = state
        .hosts
        .iter()
        .map(|h| format!("{} {}", h.name, h.ip))
        .collect();
    println!("hosts          {}", hosts.join(", "));
    println!("next:          intpath lab exec --dir {d} [--detach] HOST -- COMMAND…");
    println!("               intpath lab route --dir {d} SRC DST");
    println!("               intpath lab down --dir {d}");
    Ok(())
}

fn exec(e: ExecArgs) -> Result<()> {
    let req = ExecRequest {
        host: e.host,
        argv: e.command,
        detach: e.detach,
    };
    match lab::exec(&LabDir::new(&e.dir.dir), &req)? {
        Executed::Detached { pid, log } => {
            println!("pid {pid} on {}, output in {}", req.host, log.display());
            Ok(())
        }
        Executed::Exited(status) => {
            use std::os::unix::process::ExitStatusExt;
            // The command's own exit status, as a shell would give it.
            let code = status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
            std::process::exit(code)
        }
    }
}

fn status(s: StatusArgs) -> Result<()> {
    let st = lab::status(&LabDir::new(&s.dir.dir))?;
    if s.format == Format::Json {
        return super::emit(None, &(serde_json::to_string_pretty(&st)? + "\n"));
    }
    let d = s.dir.dir.display();
    match &st.state {
        Some(state) if st.running => {
            println!(
                "lab in {d}: running since {:.0} (Unix time), {}, supervisor pid {}",
                state.started_unix, state.topology, state.supervisor_pid
            );
            println!(
                "collector on {} ({}), run {} in {}: {} probes stored",
                state.collector.name,
                state.otlp_endpoint,
                state.run,
                state.database.display(),
                st.probes.map_or("?".to_owned(), |p| p.to_string())
            );
        }
        _ => println!("lab in {d}: not running"),
    }
    for p in &st.procs {
        println!(
            "  pid {:>7} on {:<5} {:<8} {}",
            p.proc.pid,
            p.proc.host,
            if p.running { "running" } else { "ended" },
            p.proc.argv.join(" ")
        );
    }
    for f in &st.faults {
        println!("  fault {}: {}", f.link, f.fault);
    }
    Ok(())
}
