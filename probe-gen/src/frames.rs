//! What each packet holds.
//!
//! Frames are built once per flow (or destination) with the shared
//! `intpath_core::wire` representations; per packet only the changing fields
//! are patched in place, which keeps the per-packet cost to one copy.

use intpath_core::wire::{
    EtherType, EthernetFrame, EthernetRepr, Ipv4Packet, Ipv4Repr, MacAddr, PayloadRepr,
    ProbePayload, ProbeRepr, UdpPacket, UdpRepr, ETHERNET_HEADER_LEN, IPV4_HEADER_LEN,
    IP_PROTO_UDP, PROBE_PAYLOAD_LEN, UDP_HEADER_LEN,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::net::Ipv4Addr;

/// Writes the next frame of a flow.
pub trait FrameSource {
    /// Largest frame [`FrameSource::write`] produces.
    fn max_len(&self) -> usize;
    /// Writes the next frame of `flow` into `buf` (at least `max_len` bytes),
    /// stamped with `unix_ns`, and returns its length.
    fn write(&mut self, flow: usize, unix_ns: u64, buf: &mut [u8]) -> usize;
}

/// Addresses of the sending host and of the first hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoints {
    pub src_mac: MacAddr,
    /// Switches do not check it; a host would use the first switch's MAC.
    pub dst_mac: MacAddr,
    pub src_ip: Ipv4Addr,
}

impl Endpoints {
    fn ethernet(&self) -> EthernetRepr {
        EthernetRepr {
            src: self.src_mac,
            dst: self.dst_mac,
            ethertype: EtherType::Ipv4,
        }
    }
}

/// Fresh SR-INT probes, one flow per path id, each with its own sequence.
#[derive(Debug, Clone)]
pub struct ProbeSource {
    templates: Vec<Vec<u8>>,
    path_ids: Vec<u16>,
    sequences: Vec<u32>,
}

impl ProbeSource {
    /// Probes for `path_ids` (flow `i` is `path_ids[i]`) from `ends` to the
    /// collector, each allowed `remaining_hops` records.
    pub fn new(path_ids: &[u16], ends: Endpoints, collector: Ipv4Addr, remaining_hops: u8) -> Self {
        let templates = path_ids
            .iter()
            .map(|&path_id| {
                let payload = PayloadRepr {
                    path_id,
                    sequence: 0,
                    send_ts: 0,
                };
                ProbeRepr::fresh(
                    ends.ethernet(),
                    ends.src_ip,
                    collector,
                    payload,
                    remaining_hops,
                )
                .to_bytes()
                .expect("a fresh probe fits the buffer sized for it")
            })
            .collect();
        Self {
            templates,
            path_ids: path_ids.to_vec(),
            sequences: vec![0; path_ids.len()],
        }
    }

    pub fn path_ids(&self) -> &[u16] {
        &self.path_ids
    }
}

impl FrameSource for ProbeSource {
    fn max_len(&self) -> usize {
        self.templates.iter().map(Vec::len).max().unwrap_or(0)
    }

    fn write(&mut self, flow: usize, unix_ns: u64, buf: &mut [u8]) -> usize {
        let t = &self.templates[flow];
        buf[..t.len()].copy_from_slice(t);
        let seq = &mut self.sequences[flow];
        PayloadRepr {
            path_id: self.path_ids[flow],
            sequence: *seq,
            send_ts: unix_ns,
        }
        .emit(&mut ProbePayload::new_unchecked(
            &mut buf[t.len() - PROBE_PAYLOAD_LEN..t.len()],
        ));
        *seq = seq.wrapping_add(1);
        t.len()
    }
}

/// Smallest background frame: Ethernet, IPv4 and UDP headers, no payload.
pub const MIN_TRAFFIC_FRAME: usize = ETHERNET_HEADER_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrafficError {
    #[error(
        "frame size {0} is below the {MIN_TRAFFIC_FRAME} bytes of Ethernet, IPv4 and UDP headers"
    )]
    TooSmall(usize),
    #[error("frame size {0} exceeds the largest IPv4 packet")]
    TooLarge(usize),
    #[error("no destination given")]
    NoDestination,
}

/// Background UDP traffic: one flow, each frame to a destination drawn
/// uniformly at random.
#[derive(Debug, Clone)]
pub struct TrafficSource {
    templates: Vec<Vec<u8>>,
    rng: SmallRng,
}

impl TrafficSource {
    /// Frames of exactly `frame_len` bytes (Ethernet header included, no FCS)
    /// from `ends` to each of `dsts`, UDP from `src_port` to `dst_port`.
    pub fn new(
        ends: Endpoints,
        dsts: &[(Ipv4Addr, MacAddr)],
        ports: (u16, u16),
        frame_len: usize,
        seed: u64,
    ) -> Result<Self, TrafficError> {
        if dsts.is_empty() {
            return Err(TrafficError::NoDestination);
        }
        if frame_len < MIN_TRAFFIC_FRAME {
            return Err(TrafficError::TooSmall(frame_len));
        }
        let udp_payload = frame_len - MIN_TRAFFIC_FRAME;
        let templates = dsts
            .iter()
            .map(|&(ip_dst, mac)| {
                let mut f = vec![0u8; frame_len];
                let mut eth = EthernetFrame::new_unchecked(&mut f[..]);
                EthernetRepr {
                    dst: mac,
                    ..ends.ethernet()
                }
                .emit(&mut eth);
                let mut ip = Ipv4Packet::new_unchecked(eth.payload_mut());
                Ipv4Repr {
                    src: ends.src_ip,
                    dst: ip_dst,
                    protocol: IP_PROTO_UDP,
                    ttl: 64,
                    payload_len: UDP_HEADER_LEN + udp_payload,
                }
                .emit(&mut ip)
                .and_then(|()| {
                    UdpRepr {
                        src_port: ports.0,
                        dst_port: ports.1,
                        payload_len: udp_payload,
                    }
                    .emit(&mut UdpPacket::new_unchecked(
                        &mut ip.into_inner()[IPV4_HEADER_LEN..],
                    ))
                })
                .map(|()| f)
                .map_err(|_| TrafficError::TooLarge(frame_len))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            templates,
            rng: SmallRng::seed_from_u64(seed),
        })
    }
}

impl FrameSource for TrafficSource {
    fn max_len(&self) -> usize {
        self.templates[0].len()
    }

    fn write(&mut self, _flow: usize, _unix_ns: u64, buf: &mut [u8]) -> usize {
        let t = &self.templates[self.rng.random_range(0..self.templates.len())];
        buf[..t.len()].copy_from_slice(t);
        t.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_core::wire::MAX_HOPS;

    fn ends() -> Endpoints {
        Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
        }
    }

    #[test]
    fn probes_count_per_path_and_parse_back() {
        let mut s = ProbeSource::new(&[7, 9], ends(), Ipv4Addr::new(10, 0, 9, 9), MAX_HOPS as u8);
        let mut buf = vec![0u8; s.max_len()];
        for (flow, want_seq) in [(0, 0), (1, 0), (0, 1)] {
            let n = s.write(flow, 1234 + want_seq as u64, &mut buf);
            let p = ProbeRepr::parse(&buf[..n]).unwrap();
            assert_eq!(p.sr.path_id, [7, 9][flow]);
            assert!(p.sr.labels.is_empty() && p.int.records.is_empty());
            assert_eq!(p.int.remaining_hops, MAX_HOPS as u8);
            assert_eq!(p.payload.path_id, p.sr.path_id);
            assert_eq!(p.payload.sequence, want_seq);
            assert_eq!(p.payload.send_ts, 1234 + want_seq as u64);
            assert_eq!(p.ip_dst, Ipv4Addr::new(10, 0, 9, 9));
        }
    }

    #[test]
    fn traffic_frames_have_the_asked_size_and_valid_headers() {
        let dsts = [
            (Ipv4Addr::new(10, 0, 0, 2), MacAddr([2, 0, 0, 0, 0, 2])),
            (Ipv4Addr::new(10, 0, 0, 3), MacAddr([2, 0, 0, 0, 0, 3])),
        ];
        let mut s = TrafficSource::new(ends(), &dsts, (4000, 5001), 100, 1).unwrap();
        let mut buf = vec![0u8; s.max_len()];
        let mut seen = [0; 2];
        for _ in 0..200 {
            let n = s.write(0, 0, &mut buf);
            assert_eq!(n, 100);
            let eth = EthernetFrame::new_checked(&buf[..n]).unwrap();
            let ip = Ipv4Packet::new_checked(eth.payload()).unwrap();
            let ip_repr = Ipv4Repr::parse(&ip).unwrap();
            let i = dsts.iter().position(|d| d.0 == ip_repr.dst).unwrap();
            assert_eq!(eth.dst_addr(), dsts[i].1);
            let udp = UdpPacket::new_checked(ip.payload()).unwrap();
            assert_eq!(
                (udp.src_port(), udp.dst_port(), udp.len()),
                (4000, 5001, 66)
            );
            seen[i] += 1;
        }
        assert!(seen[0] > 60 && seen[1] > 60, "{seen:?}");
        assert_eq!(
            TrafficSource::new(ends(), &dsts, (1, 2), 41, 0).unwrap_err(),
            TrafficError::TooSmall(41)
        );
        assert_eq!(
            TrafficSource::new(ends(), &dsts, (1, 2), 70_000, 0).unwrap_err(),
            TrafficError::TooLarge(70_000)
        );
        assert_eq!(
            TrafficSource::new(ends(), &[], (1, 2), 100, 0).unwrap_err(),
            TrafficError::NoDestination
        );
    }
}
