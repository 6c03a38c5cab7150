//! Segments sorted into connections, each with its client side decided and
//! its client→server direction tracked.
//!
//! Which side is the client: the side that sent the SYN (or received the
//! SYN-ACK) when the capture saw the handshake; otherwise the side whose
//! port is higher, since clients take ephemeral ports (Linux 32768–60999,
//! IANA 49152–65535) and servers listen on low, well-known ones. With equal
//! ports the sender of the first segment seen is taken. A SYN on a pair
//! whose previous connection ended (FIN or RST) starts a new connection.

use super::connection::{EpochResult, Sent, Tracker};
use super::pcap::{Segment, Transport};
use super::{ClientFilter, Config};
use std::collections::HashMap;
use std::net::SocketAddr;

/// One connection's result for one epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub client: SocketAddr,
    pub server: SocketAddr,
    pub transport: Transport,
    /// Start of the epoch, ns since the Unix epoch.
    pub epoch_start_ns: i64,
    pub result: EpochResult,
}

struct Conn {
    client: SocketAddr,
    server: SocketAddr,
    transport: Transport,
    /// Whether the `--client` filter keeps it.
    wanted: bool,
    /// A FIN or RST was seen (either way).
    ended: bool,
    tracker: Tracker,
    rows: Vec<Row>,
}

impl Conn {
    fn push(&mut self, r: Option<EpochResult>, c: &Config) {
        if let Some(result) = r {
            self.rows.push(Row {
                client: self.client,
                server: self.server,
                transport: self.transport,
                epoch_start_ns: result
                    .epoch
                    .saturating_mul(i64::try_from(c.epoch.as_nanos()).unwrap_or(i64::MAX)),
                result,
            });
        }
    }
}

/// Every connection of a capture.
pub struct Flows<'c> {
    cfg: &'c Config,
    /// Endpoint pair (lower first) → index of its current connection.
    by_pair: HashMap<(Transport, SocketAddr, SocketAddr), usize>,
    conns: Vec<Conn>,
}

impl<'c> Flows<'c> {
    pub fn new(cfg: &'c Config) -> Self {
        Flows {
            cfg,
            by_pair: HashMap::new(),
            conns: Vec::new(),
        }
    }

    /// Takes the next segment of the capture (in capture order).
    pub fn push(&mut self, s: &Segment) {
        let pair = (s.transport, s.src.min(s.dst), s.src.max(s.dst));
        let handshake = s.syn && !s.ack;
        let index = match self.by_pair.get(&pair) {
            Some(&i) if !(handshake && self.conns[i].ended) => i,
            _ => {
                let (client, server) = client_side(s);
                let wanted = self.cfg.client.is_none_or(|f| f.matches(client));
                self.conns.push(Conn {
                    client,
                    server,
                    transport: s.transport,
                    wanted,
                    ended: false,
                    tracker: Tracker::new(self.cfg),
                    rows: Vec::new(),
                });
                if let Some(&old) = self.by_pair.get(&pair) {
                    let (cfg, c) = (self.cfg, &mut self.conns[old]);
                    let r = c.tracker.finish(cfg);
                    c.push(r, cfg);
                }
                self.by_pair.insert(pair, self.conns.len() - 1);
                self.conns.len() - 1
            }
        };
        let (cfg, c) = (self.cfg, &mut self.conns[index]);
        c.ended |= s.fin || s.rst;
        if !c.wanted || s.src != c.client {
            return;
        }
        let sent = Sent {
            at_ns: s.at_ns,
            payload: s.payload,
            pure_ack: s.pure_ack(),
            mss: s.mss,
        };
        let r = c.tracker.observe(sent, cfg);
        c.push(r, cfg);
    }

    /// Ends every connection: the rows of all wanted connections, in the
    /// order the connections were first seen, and how many there were.
    pub fn finish(mut self) -> (Vec<Row>, usize) {
        let cfg = self.cfg;
        let mut rows = Vec::new();
        let mut n = 0;
        for c in &mut self.conns {
            let r = c.tracker.finish(cfg);
            c.push(r, cfg);
            if c.wanted {
                n += 1;
                rows.append(&mut c.rows);
            }
        }
        (rows, n)
    }
}

/// (client, server) of the connection whose first seen segment is `s`.
fn client_side(s: &Segment) -> (SocketAddr, SocketAddr) {
    let src_is_client = match (s.transport, s.syn, s.ack) {
        (Transport::Tcp, true, false) => true,
        (Transport::Tcp, true, true) => false,
        _ => s.src.port() >= s.dst.port(),
    };
    if src_is_client {
        (s.src, s.dst)
    } else {
        (s.dst, s.src)
    }
}

impl ClientFilter {
    /// Whether `addr` is the filtered client.
    pub fn matches(&self, addr: SocketAddr) -> bool {
        addr.ip() == self.ip && self.port.is_none_or(|p| p == addr.port())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn seg(at_us: i64, src: &str, dst: &str, payload: u32) -> Segment {
        let addr = |a: &str| a.parse().expect("address");
        Segment::tcp_ack(at_us * 1_000, addr(src), addr(dst), payload)
    }

    fn run(cfg: &Config, segs: &[Segment]) -> (Vec<Row>, usize) {
        let mut f = Flows::new(cfg);
        segs.iter().for_each(|s| f.push(s));
        f.finish()
    }

    #[test]
    fn the_syn_sender_is_the_client_even_on_a_low_port() {
        let syn = Segment {
            syn: true,
            ack: false,
            ..seg(0, "10.0.0.1:80", "10.0.0.2:50000", 0)
        };
        let mut segs = vec![syn];
        // Requests from :80 every ms; the server's replies in between.
        for i in 1..=10 {
            segs.push(seg(i * 1000, "10.0.0.1:80", "10.0.0.2:50000", 100));
            segs.push(seg(i * 1000 + 500, "10.0.0.2:50000", "10.0.0.1:80", 900));
        }
        let (rows, n) = run(&Config::default(), &segs);
        assert_eq!(n, 1);
        assert_eq!(rows[0].client, "10.0.0.1:80".parse().expect("address"));
        let e = rows[0].result.estimate.expect("an estimate");
        assert!((e.latency_ns - 1_000_000.0).abs() < 1e-6, "{e:?}");
    }

    #[test]
    fn without_a_syn_the_higher_port_is_the_client() {
        // The first segment seen is the server's response.
        let mut segs = vec![seg(0, "10.0.0.2:443", "10.0.0.1:40000", 900)];
        segs.extend((1..=10).map(|i| seg(i * 2000, "10.0.0.1:40000", "10.0.0.2:443", 100)));
        let (rows, _) = run(&Config::default(), &segs);
        assert_eq!(rows[0].client, "10.0.0.1:40000".parse().expect("address"));
        assert_eq!(rows[0].result.counted, 9);
    }

    #[test]
    fn the_client_filter_keeps_matching_connections_only() {
        let a: Vec<Segment> = (0..5)
            .map(|i| seg(i * 1000, "10.0.0.1:40000", "10.0.0.9:80", 10))
            .collect();
        let b: Vec<Segment> = (0..5)
            .map(|i| seg(i * 1000, "10.0.0.2:40000", "10.0.0.9:80", 10))
            .collect();
        let segs: Vec<Segment> = a.into_iter().chain(b).collect();
        let only = |f: &str| Config {
            client: Some(f.parse().expect("filter")),
            ..Config::default()
        };
        let (rows, n) = run(&only("10.0.0.2"), &segs);
        assert_eq!((rows.len(), n), (1, 1));
        assert_eq!(rows[0].client.ip().to_string(), "10.0.0.2");
        assert_eq!(run(&only("10.0.0.2:40001"), &segs).1, 0);
        assert_eq!(run(&only("10.0.0.1:40000"), &segs).1, 1);
        assert_eq!(run(&Config::default(), &segs).1, 2);
    }

    #[test]
    fn a_syn_after_a_fin_starts_a_new_connection() {
        let c = Config {
            epoch: Duration::from_secs(10),
            ..Config::default()
        };
        let mut segs: Vec<Segment> = (0..5)
            .map(|i| seg(i * 1000, "10.0.0.1:40000", "10.0.0.9:80", 10))
            .collect();
        segs.push(Segment {
            fin: true,
            ..seg(5000, "10.0.0.1:40000", "10.0.0.9:80", 0)
        });
        segs.push(Segment {
            syn: true,
            ack: false,
            ..seg(9000, "10.0.0.1:40000", "10.0.0.9:80", 0)
        });
        segs.extend((1..5).map(|i| seg(9000 + i * 3000, "10.0.0.1:40000", "10.0.0.9:80", 10)));
        let (rows, n) = run(&c, &segs);
        assert_eq!(n, 2);
        let lat: Vec<f64> = rows
            .iter()
            .map(|r| r.result.estimate.expect("an estimate").latency_ns)
            .collect();
        assert_eq!(lat, vec![1_000_000.0, 3_000_000.0]);
    }
}
