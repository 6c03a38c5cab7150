//! What a run is asked to do, as typed values: the binary turns its flags
//! into these (and rejects combinations that make no sense there), the
//! library only ever sees a valid request.

use intpath_core::wire::MacAddr;
use std::net::Ipv4Addr;
use std::path::PathBuf;

/// How fast, how long and how bursty.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Packets per second (per path for probes).
    pub rate: f64,
    /// Exponential inter-arrival times (a Poisson process) instead of constant.
    pub poisson: bool,
    /// Packets per flow before stopping.
    pub count: Option<u64>,
    /// Seconds before stopping; neither this nor `count`: until stopped.
    pub duration: Option<f64>,
    /// Seed of the Poisson gaps and the destination choice; `None`: from
    /// the clock.
    pub seed: Option<u64>,
    /// Most frames per system call when behind schedule.
    pub batch: usize,
}

/// How frames reach an interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tx {
    /// Batches of frames per sendmmsg(2) on a transmit-only AF_PACKET socket.
    Mmsg,
    /// pnet's datalink channel, one frame per call.
    Pnet,
}

/// Where frames enter the network and with which addresses: out of an
/// interface, or as P4Runtime packet-outs into a switch (found by name in
/// a switch map) for a switch without a host.
#[derive(Debug, Clone)]
pub struct Out {
    pub iface: Option<String>,
    pub switch: Option<String>,
    pub switch_map: Option<PathBuf>,
    /// P4Runtime election id for packet-outs: the switch takes them only
    /// from its primary.
    pub election_id: u64,
    /// Source IPv4 address; `None`: the interface's first one.
    pub src_ip: Option<Ipv4Addr>,
    /// Source MAC; `None`: the interface's, or zero at a switch.
    pub src_mac: Option<MacAddr>,
    pub dst_mac: MacAddr,
    pub tx: Tx,
    /// Skip the interface's qdisc (PACKET_QDISC_BYPASS); only with
    /// [`Tx::Mmsg`].
    pub qdisc_bypass: bool,
}

impl Pace {
    /// The given seed, or one from the clock.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        })
    }
}
