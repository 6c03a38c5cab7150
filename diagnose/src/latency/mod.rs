//! Pirate: response latency from the client→server direction alone.
//!
//! A vantage point that sees only what clients send (asymmetric routes,
//! direct server return, one tap on a switch) cannot pair requests with
//! responses. It can time what the responses cause: a client that waits for
//! responses sends in bursts, and the pause before a burst is the response
//! latency. Pirate (Vannarth Shobhana et al., "Measuring Round-Trip Response
//! Latencies Under Asymmetric Routing") finds that pause without a threshold:
//! per connection it keeps a histogram of inter-packet gaps as a few modes
//! ([`modes`], the paper's Alg. 2), skips pure ACKs and marks the gaps after
//! short segments ([`connection`]), and per epoch turns the modes into the
//! mean batch-to-batch time ([`estimate`], the proportional mode sum).
//!
//! Where the batches dissolve (a window of requests in flight whose
//! responses come back staggered), [`window`] replaces the mode sum with the
//! client's window times its mean gap (Little's law).
//!
//! [`pcap`] reads the capture, [`flows`] decides each connection's client
//! and tracks only its direction, [`fabric`] subtracts the INT-measured
//! queueing of the host pair's paths to leave the server's own time, and
//! [`sim`] generates packet timings with known client latencies for the
//! evaluation ([`eval`]).

pub mod connection;
pub mod estimate;
pub mod fabric;
pub mod flows;
pub mod modes;
pub mod pcap;
pub mod window;

pub use connection::EpochResult;
pub use estimate::{Basis, Estimate};
pub use flows::Row;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

/// Why a capture could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum LatencyError {
    #[error("{0}: cannot open: {1}")]
    Open(String, std::io::Error),
    #[error("{0}: not a pcap file: {1}")]
    NotPcap(String, String),
    #[error("{0}: pcapng is not read here; convert it first: editcap -F pcap {0} OUT.pcap")]
    PcapNg(String),
    #[error("{0}: link type {1} is not read here (Ethernet, Linux cooked v1/v2, raw IP, BSD loopback are)")]
    LinkType(String, String),
    #[error("{name}: record {record}: {why}")]
    Record {
        name: String,
        record: u64,
        why: String,
    },
    #[error("--client {0:?}: expected an IP address or IP:PORT")]
    Client(String),
    #[error(transparent)]
    HostMap(#[from] crate::hosts::HostMapError),
    #[error(transparent)]
    Store(#[from] intpath_store::StoreError),
    #[error("{0}: no collector run with probes overlaps the capture")]
    NoRun(String),
}

/// A client to keep: an address, and a port if given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientFilter {
    pub ip: IpAddr,
    pub port: Option<u16>,
}

impl std::str::FromStr for ClientFilter {
    type Err = LatencyError;
    fn from_str(s: &str) -> Result<Self, LatencyError> {
        if let Ok(a) = s.parse::<SocketAddr>() {
            return Ok(ClientFilter {
                ip: a.ip(),
                port: Some(a.port()),
            });
        }
        s.parse::<IpAddr>()
            .map(|ip| ClientFilter { ip, port: None })
            .map_err(|_| LatencyError::Client(s.to_owned()))
    }
}

/// How to estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Length of the epochs the estimates are made over (boundaries at
    /// multiples of it since the Unix epoch).
    pub epoch: Duration,
    /// Most modes a connection's histogram keeps (the paper's N; 10 was
    /// enough in all its experiments).
    pub modes: usize,
    /// How near a gap must be to a mode's range to join it.
    pub epsilon: Duration,
    /// Modes whose mean is at least this are retransmission timeouts, not
    /// responses: Linux never retransmits sooner (`TCP_RTO_MIN`, 200 ms).
    pub rto: Duration,
    /// Gaps at least this long are the connection idling and never enter
    /// the histogram (where they would take a mode): Linux's initial RTO
    /// (`TCP_TIMEOUT_INIT`, 1 s), after which it also restarts slow start.
    pub idle: Duration,
    pub client: Option<ClientFilter>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            epoch: Duration::from_secs(1),
            modes: 10,
            epsilon: Duration::from_micros(20),
            rto: Duration::from_millis(200),
            idle: Duration::from_secs(1),
            client: None,
        }
    }
}

/// Per-connection, per-epoch estimates of one capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub rows: Vec<Row>,
    /// Records in the file.
    pub records: u64,
    /// TCP and UDP segments among them.
    pub segments: u64,
    /// Records that held no segment, by reason.
    pub skipped: BTreeMap<&'static str, u64>,
    /// Connections kept (after `--client`).
    pub connections: usize,
}

/// Estimates the response latency of every connection in the pcap file
/// `path`, epoch by epoch.
pub fn analyse(path: &Path, c: &Config) -> Result<Analysis, LatencyError> {
    let mut cap = pcap::Capture::open(path)?;
    let mut flows = flows::Flows::new(c);
    let mut segments = 0;
    while let Some(s) = cap.next_segment()? {
        segments += 1;
        flows.push(&s);
    }
    let (rows, connections) = flows.finish();
    Ok(Analysis {
        rows,
        records: cap.records,
        segments,
        skipped: cap.skipped,
        connections,
    })
}

/// The same estimates from segments already in memory, in capture order.
pub fn analyse_segments<'a>(
    segments: impl IntoIterator<Item = &'a pcap::Segment>,
    c: &Config,
) -> Vec<Row> {
    let mut flows = flows::Flows::new(c);
    segments.into_iter().for_each(|s| flows.push(s));
    flows.finish().0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_filters_parse_with_and_without_port() {
        let f: ClientFilter = "10.0.0.1:4000".parse().expect("ip:port");
        assert_eq!(f.port, Some(4000));
        let f: ClientFilter = "10.0.0.1".parse().expect("ip");
        assert_eq!((f.ip.to_string(), f.port), ("10.0.0.1".into(), None));
        let f: ClientFilter = "[::1]:80".parse().expect("v6");
        assert!(f.ip.is_ipv6());
        let e = "client-1"
            .parse::<ClientFilter>()
            .expect_err("not an address");
        assert!(e.to_string().contains("client-1"), "{e}");
    }
}
