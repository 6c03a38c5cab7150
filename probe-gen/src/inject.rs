//! One paced run: open the way in (an interface or a switch's packet-outs),
//! pace a frame source through it, and report progress on stderr.

use crate::config::{Out, Pace, Tx};
use crate::frames::{Endpoints, FrameSource};
use crate::schedule::{Interarrival, Limit, Schedule, ScheduleError, Spacing};
use crate::sender;
use crate::stats::Report;
use crate::transport::{AfPacket, Interface, OpenError, PacketOut, PnetChannel, Transport};
use intpath_core::switch_map::{SwitchEntry, SwitchMap, SwitchMapError};
use intpath_p4rt::client::{ClientConfig, Target};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    SwitchMap(#[from] SwitchMapError),
    #[error("switch {name:?} is not in the switch map {}", map.display())]
    UnknownSwitch { name: String, map: PathBuf },
    #[error("give --iface, or --switch with --switch-map")]
    NoEntry,
    #[error("{0} has no IPv4 address; give one with --src-ip")]
    NoSourceIp(String),
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error("--qdisc-bypass needs --tx mmsg")]
    QdiscBypass,
}

/// Where frames enter the network.
pub enum Via {
    Iface(Interface),
    Switch(SwitchEntry),
}

impl std::fmt::Display for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Via::Iface(i) => write!(f, "interface {}", i.name),
            Via::Switch(s) => write!(f, "packet-out at {} ({})", s.name, s.grpc_addr),
        }
    }
}

/// Finds the way in and the frames' addresses (the interface's own unless
/// given).
pub fn endpoints(out: &Out) -> Result<(Via, Endpoints), InjectError> {
    let (via, default_ip, default_mac) = match (&out.iface, &out.switch, &out.switch_map) {
        (Some(name), _, _) => {
            let iface = Interface::find(name)?;
            let (ip, mac) = (iface.ipv4, iface.mac);
            (Via::Iface(iface), ip, mac)
        }
        (None, Some(sw), Some(map_file)) => {
            let map = SwitchMap::load(map_file)?;
            let Some(entry) = map.get(sw) else {
                return Err(InjectError::UnknownSwitch {
                    name: sw.clone(),
                    map: map_file.clone(),
                });
            };
            (Via::Switch(entry.clone()), None, None)
        }
        _ => return Err(InjectError::NoEntry),
    };
    let src_ip = match out.src_ip.or(default_ip) {
        Some(ip) => ip,
        None => return Err(InjectError::NoSourceIp(via.to_string())),
    };
    let ends = Endpoints {
        src_mac: out.src_mac.or(default_mac).unwrap_or_default(),
        dst_mac: out.dst_mac,
        src_ip,
    };
    Ok((via, ends))
}

/// Paces `flows` flows of `source` out `via` for at most `duration`
/// seconds, until `stop`, and reports on stderr.
pub fn run(
    out: &Out,
    via: Via,
    pace: &Pace,
    duration: Option<f64>,
    flows: usize,
    source: &mut dyn FrameSource,
    stop: &AtomicBool,
) -> Result<Report, InjectError> {
    let spacing = if pace.poisson {
        Spacing::Poisson
    } else {
        Spacing::Constant
    };
    let seed = pace.seed();
    let gaps = (0..flows as u64)
        .map(|i| Interarrival::new(pace.rate, spacing, seed.wrapping_add(i)))
        .collect::<Result<_, _>>()?;
    let limit = Limit {
        count_per_flow: pace.count,
        duration: duration.map(Duration::from_secs_f64),
    };
    let mut schedule = Schedule::new(gaps, limit);
    let mut transport: Box<dyn Transport> = match (via, out.tx) {
        (Via::Iface(iface), Tx::Mmsg) => Box::new(AfPacket::open(&iface, out.qdisc_bypass)?),
        (Via::Iface(_), Tx::Pnet) if out.qdisc_bypass => return Err(InjectError::QdiscBypass),
        (Via::Iface(iface), Tx::Pnet) => Box::new(PnetChannel::open(&iface)?),
        (Via::Switch(sw), _) => {
            let mut config = ClientConfig::new(Target {
                name: sw.name,
                addr: sw.grpc_addr,
                device_id: sw.device_id,
            });
            config.election_id = u128::from(out.election_id);
            Box::new(PacketOut::connect(config)?)
        }
    };
    let opts = sender::Options {
        batch: pace.batch,
        ..Default::default()
    };
    let mut last = Report::default();
    let report = sender::run(
        &mut schedule,
        source,
        transport.as_mut(),
        stop,
        &opts,
        &mut |r: &Report| {
            let dt = (r.elapsed - last.elapsed).as_secs_f64();
            eprintln!(
                "probe-gen: {:.1} s: sent {}, errors {} ({:.0} pps)",
                r.elapsed.as_secs_f64(),
                r.sent,
                r.errors,
                (r.sent - last.sent) as f64 / dt.max(1e-9)
            );
            last.clone_from(r);
        },
    );
    let l = &report.lateness;
    eprintln!(
        "probe-gen: {} after {:.3} s: sent {}, errors {} ({:.1} pps); lateness p50 {} µs, p99 {} µs, max {} µs",
        if report.interrupted { "interrupted" } else { "done" },
        report.elapsed.as_secs_f64(),
        report.sent,
        report.errors,
        report.pps(),
        l.quantile_ns(0.5) / 1000,
        l.quantile_ns(0.99) / 1000,
        l.max_ns() / 1000
    );
    Ok(report)
}
