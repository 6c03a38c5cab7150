//! What a demo run is asked to do.

use crate::workload::FaultSpec;
use intpath_core::topo::AddHosts;
use intpath_store::Db;
use std::path::PathBuf;

/// One demo run: the network, its traffic and where everything lands.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// Topology to build in Mininet: generator expression or file.
    pub topo: String,
    /// Hosts to attach to a topology file without any.
    pub add_hosts: AddHosts,
    /// Seconds of probes and background traffic.
    pub duration: f64,
    /// Directory for everything the run writes: topology, plan, switch map,
    /// telemetry database, heatmaps and every process's log.
    pub out: PathBuf,
    /// Background UDP packets/s each host sends to the other hosts (Poisson
    /// arrivals, uniformly chosen destinations).
    pub traffic_pps: f64,
    /// Probes per path per second.
    pub probe_pps: f64,
    /// Egress rate of the congested port, packets/s; `None`: a third of
    /// what the background traffic offers it.
    pub bottleneck_pps: Option<u32>,
    /// Egress queue depth of every switch port, packets.
    pub queue_depth: u32,
    /// Telemetry database; `None`: `telemetry.db` in `out`.
    pub db: Option<Db>,
    /// Collector processes, all writing one run, each taking the probes of
    /// its share of the generator switches; `None`: one, or one per
    /// collector host.
    pub collectors: Option<usize>,
    /// Hosts that run a collector; empty: hosts on no probe path's first
    /// switch, so they never see outgoing probes.
    pub collector_hosts: Vec<String>,
    pub switch: SwitchKind,
    /// bmv2 JSON compiled from `p4/sr_int.p4`, pushed with the P4Info when
    /// the switch is bmv2.
    pub device_config: Option<PathBuf>,
    /// Fail when the paths that avoid the congested link lose more than
    /// this percentage of their probes; `None`: report only.
    pub max_loss: Option<f64>,
    /// Also run the microservice workload and end in a diagnosis of its
    /// fault, instead of congesting one link from the start.
    pub workload: Option<WorkloadConfig>,
}

impl DemoConfig {
    /// The telemetry database the run writes.
    pub fn db(&self) -> Db {
        self.db
            .clone()
            .unwrap_or_else(|| Db::Sqlite(self.out.join("telemetry.db")))
    }
}

/// Which switch the network runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SwitchKind {
    /// The intpath reference switch.
    Soft,
    /// simple_switch_grpc (needs the device config).
    Bmv2,
}

/// The HotelReservation workload and the fault switched on halfway.
#[derive(Debug, Clone)]
pub struct WorkloadConfig {
    /// The fault the diagnosis must name first; `None`: diagnose only.
    pub fault: Option<FaultSpec>,
    /// Requests per second the load generator offers (Poisson arrivals).
    pub request_rate: f64,
    /// Service fault: milliseconds added to a request of the service ...
    pub fault_delay_ms: u64,
    /// ... for this percentage of its requests.
    pub fault_delay_pct: f64,
    /// Link fault: egress rate of the throttled port, packets/s; `None`:
    /// 80 % of the probes and background traffic offered to it.
    pub fault_pps: Option<u32>,
    /// Loss fault: percentage of packets lost on the link.
    pub fault_loss_pct: f64,
    /// Delay fault: milliseconds the link holds every frame.
    pub fault_link_delay_ms: f64,
}

/// Probe and background rates a run uses unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Probes per path per second.
    pub probe_pps: f64,
    /// Background packets/s per host.
    pub traffic_pps: f64,
}

impl SwitchKind {
    /// The demo's rates: the reference switch carries the background that
    /// congests its bottleneck (0.00 % loss elsewhere); twenty bmv2
    /// processes sharing two cores forward far less than the 7–11 k
    /// packets/s one of them manages alone (at the reference switch's rates
    /// they lost 95 % of the probes), so bmv2 gets about a tenth of the
    /// switch hops per second.
    pub fn demo_rates(self) -> Rates {
        match self {
            SwitchKind::Soft => Rates {
                probe_pps: 50.0,
                traffic_pps: 200.0,
            },
            SwitchKind::Bmv2 => Rates {
                probe_pps: 20.0,
                traffic_pps: 20.0,
            },
        }
    }

    /// The lab's rates: light background, so that the user's application
    /// is the load.
    pub fn lab_rates(self) -> Rates {
        match self {
            SwitchKind::Soft => Rates {
                probe_pps: 50.0,
                traffic_pps: 20.0,
            },
            SwitchKind::Bmv2 => Rates {
                probe_pps: 20.0,
                traffic_pps: 5.0,
            },
        }
    }
}
