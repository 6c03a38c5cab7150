//! From bytes to a finished probe, through core's header views.
//!
//! Probes reach the collector three ways: as Ethernet frames (interface
//! capture), as UDP payloads (socket), or wrapped in a packet-in header (the
//! controller). Each way ends in [`parse_udp_payload`]. Nothing here panics on
//! outside data: every failure is a [`Reject`] reason that gets counted.

use intpath_core::wire::{
    self, EtherType, EthernetFrame, IntHeader, IntRecordRepr, Ipv4Packet, PacketIn, ProbePayload,
    SrHeader, UdpPacket, IPV4_HEADER_LEN, IP_PROTO_UDP, MAX_HOPS, PROBE_PAYLOAD_LEN,
    SRINT_UDP_PORT,
};
use std::sync::atomic::{AtomicU64, Ordering};

/// A finished probe as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub path_id: u16,
    pub sequence: u32,
    /// Generator clock, ns since the Unix epoch.
    pub send_ns: u64,
    /// Collector clock, ns since the Unix epoch.
    pub recv_ns: u64,
    /// Newest first, as on the wire: record 0 is the sink's.
    pub records: Vec<IntRecordRepr>,
}

/// Why a datagram was not stored. Every one is counted under [`Reject::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Reject {
    #[error("not an SR-INT probe (EtherType, protocol or UDP port)")]
    NotProbe,
    #[error("truncated header or record stack")]
    Truncated,
    #[error("label or hop count over the stack capacity")]
    Oversized,
    #[error("malformed header field")]
    Malformed,
    #[error("bytes after the probe payload")]
    TrailingBytes,
    #[error("route not finished (DONE flag missing or labels left)")]
    Unfinished,
    #[error("SR header and payload name different paths")]
    PathIdMismatch,
    #[error("path id not in the plan")]
    UnknownPath,
    #[error("hop count differs from the planned path")]
    WrongHopCount,
    #[error("records leave the planned path (switch or port)")]
    OffPath,
    #[error("IPv4 header with options (the switches drop them)")]
    Ipv4Options,
    #[error("IPv4 fragment (probes are sent whole, with DF)")]
    Fragment,
    #[error("IPv4 and UDP lengths disagree")]
    LengthMismatch,
    #[error("records plus remaining hops exceed the hop limit")]
    HopBudget,
    #[error("send time implausibly far from the receive time")]
    SendTime,
    #[error("hop timestamps out of order or beyond the send-time window")]
    HopTimes,
    #[error("queue depth wider than the switch's field")]
    QueueDepth,
}

impl Reject {
    pub const ALL: [Reject; 17] = [
        Reject::NotProbe,
        Reject::Truncated,
        Reject::Oversized,
        Reject::Malformed,
        Reject::TrailingBytes,
        Reject::Unfinished,
        Reject::PathIdMismatch,
        Reject::UnknownPath,
        Reject::WrongHopCount,
        Reject::OffPath,
        Reject::Ipv4Options,
        Reject::Fragment,
        Reject::LengthMismatch,
        Reject::HopBudget,
        Reject::SendTime,
        Reject::HopTimes,
        Reject::QueueDepth,
    ];

    /// Stable name, as stored in the `rejects` table.
    pub fn name(self) -> &'static str {
        match self {
            Reject::NotProbe => "not_probe",
            Reject::Truncated => "truncated",
            Reject::Oversized => "oversized",
            Reject::Malformed => "malformed",
            Reject::TrailingBytes => "trailing_bytes",
            Reject::Unfinished => "unfinished",
            Reject::PathIdMismatch => "path_id_mismatch",
            Reject::UnknownPath => "unknown_path",
            Reject::WrongHopCount => "wrong_hop_count",
            Reject::OffPath => "off_path",
            Reject::Ipv4Options => "ipv4_options",
            Reject::Fragment => "fragment",
            Reject::LengthMismatch => "length_mismatch",
            Reject::HopBudget => "hop_budget",
            Reject::SendTime => "send_time",
            Reject::HopTimes => "hop_times",
            Reject::QueueDepth => "queue_depth",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl From<wire::Error> for Reject {
    fn from(e: wire::Error) -> Self {
        match e {
            wire::Error::Truncated(_) => Reject::Truncated,
            wire::Error::Malformed(_) => Reject::Malformed,
            wire::Error::Oversized(_) => Reject::Oversized,
        }
    }
}

/// Rejections by reason, shared by every capture thread.
#[derive(Debug, Default)]
pub struct RejectCounts([AtomicU64; Reject::ALL.len()]);

impl RejectCounts {
    pub fn count(&self, r: Reject) {
        self.0[r.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub fn get(&self, r: Reject) -> u64 {
        self.0[r.index()].load(Ordering::Relaxed)
    }

    /// Non-zero counts, by reason name.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        Reject::ALL
            .iter()
            .map(|&r| (r.name(), self.get(r)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    pub fn total(&self) -> u64 {
        Reject::ALL.iter().map(|&r| self.get(r)).sum()
    }
}

/// Parses an Ethernet frame carrying a probe, with the IPv4 checks
/// `sr_int.p4` makes at every hop (version 4, no options, right checksum,
/// lengths that fill each other exactly) and no fragments: a frame the
/// switches would have dropped is not stored either.
pub fn parse_frame(frame: &[u8], recv_ns: u64) -> Result<Probe, Reject> {
    let eth = EthernetFrame::new_checked(frame)?;
    if eth.ethertype() != EtherType::Ipv4 {
        return Err(Reject::NotProbe);
    }
    let ip = Ipv4Packet::new_checked(eth.payload())?;
    if ip.protocol() != IP_PROTO_UDP {
        return Err(Reject::NotProbe);
    }
    if !ip.verify_checksum() {
        return Err(Reject::Malformed);
    }
    let udp = UdpPacket::new_checked(ip.payload())?;
    if udp.dst_port() != SRINT_UDP_PORT {
        return Err(Reject::NotProbe);
    }
    if ip.header_len() != IPV4_HEADER_LEN {
        return Err(Reject::Ipv4Options);
    }
    if ip.is_fragment() {
        return Err(Reject::Fragment);
    }
    if usize::from(udp.len()) != ip.payload().len() {
        return Err(Reject::LengthMismatch);
    }
    parse_udp_payload(udp.payload(), recv_ns)
}

/// Parses a frame the controller got as a packet-in (CPU header first).
pub fn parse_packet_in(buf: &[u8], recv_ns: u64) -> Result<Probe, Reject> {
    let pin = PacketIn::new_checked(buf)?;
    parse_frame(pin.payload(), recv_ns)
}

/// Parses the UDP payload of a probe: SR header, INT stack, probe payload.
pub fn parse_udp_payload(body: &[u8], recv_ns: u64) -> Result<Probe, Reject> {
    // The views report counts over the capacity as oversized before they
    // look for the labels or records, so such a probe is never "truncated".
    let sr = SrHeader::new_checked(body)?;
    let rest = &body[sr.header_len()..];
    let int = IntHeader::new_checked(rest)?;
    let rest = &rest[int.header_len()..];
    let payload = ProbePayload::new_checked(rest)?;
    if rest.len() > PROBE_PAYLOAD_LEN {
        return Err(Reject::TrailingBytes);
    }
    if !sr.is_done() || sr.num_labels() != 0 {
        return Err(Reject::Unfinished);
    }
    if payload.path_id() != sr.path_id() {
        return Err(Reject::PathIdMismatch);
    }
    // The generator's budget is at most MAX_HOPS and every record spends one.
    if usize::from(int.hop_count()) + usize::from(int.remaining_hops()) > MAX_HOPS {
        return Err(Reject::HopBudget);
    }
    Ok(Probe {
        path_id: sr.path_id(),
        sequence: payload.sequence(),
        send_ns: payload.send_ts(),
        recv_ns,
        records: int.records().map(|r| IntRecordRepr::parse(&r)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{finished_probe, Conditions};
    use intpath_core::plan::ProbePath;
    use intpath_core::wire::{
        EthernetRepr, Ipv4Repr, PacketInRepr, CPU_HEADER_LEN, INT_HEADER_LEN, SR_HEADER_LEN,
    };
    use intpath_store::links::{Cable, LinkMap};

    fn frame() -> Vec<u8> {
        let links = LinkMap::new(
            [("a".into(), 1), ("b".into(), 2)],
            [Cable::new("a", 1, "b", 1)],
        )
        .unwrap();
        let path = ProbePath {
            id: 3,
            nodes: vec!["a".into(), "b".into()],
            egress_ports: vec![1],
        };
        let q = |_| 5;
        let c = Conditions {
            sequence: 9,
            send_ns: 1_000_000_000,
            qdepth: &q,
            sink_port: 2,
        };
        finished_probe(&path, &links, &c).to_bytes().unwrap()
    }

    #[test]
    fn frame_packet_in_and_udp_payload_agree() {
        let f = frame();
        let p = parse_frame(&f, 7).unwrap();
        assert_eq!(
            (p.path_id, p.sequence, p.send_ns, p.recv_ns),
            (3, 9, 1_000_000_000, 7)
        );
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.records[0].switch_id, 2, "record 0 is the sink's");
        let mut pin = vec![0u8; CPU_HEADER_LEN];
        PacketInRepr { ingress_port: 4 }.emit(&mut PacketIn::new_unchecked(&mut pin[..]));
        pin.extend_from_slice(&f);
        assert_eq!(parse_packet_in(&pin, 7).unwrap(), p);
        assert_eq!(parse_udp_payload(&udp_payload(&f), 7).unwrap(), p);
    }

    fn udp_payload(f: &[u8]) -> Vec<u8> {
        let eth = EthernetFrame::new_checked(f).unwrap();
        let ip = Ipv4Packet::new_checked(eth.payload()).unwrap();
        UdpPacket::new_checked(ip.payload())
            .unwrap()
            .payload()
            .to_vec()
    }

    /// `f` with its Ethernet, IPv4 and UDP headers edited by `edit`.
    fn edited(f: &[u8], edit: impl FnOnce(&mut EthernetRepr, &mut Ipv4Repr, &mut u16)) -> Vec<u8> {
        let mut out = f.to_vec();
        let mut eth = EthernetFrame::new_checked(&mut out[..]).unwrap();
        let mut eth_repr = EthernetRepr::parse(&eth).unwrap();
        let mut ip = Ipv4Packet::new_checked(eth.payload_mut()).unwrap();
        let mut ip_repr = Ipv4Repr::parse(&ip).unwrap();
        let mut udp = UdpPacket::new_checked(ip.payload_mut()).unwrap();
        let mut port = udp.dst_port();
        edit(&mut eth_repr, &mut ip_repr, &mut port);
        udp.set_dst_port(port);
        ip_repr.emit(&mut ip).unwrap();
        eth_repr.emit(&mut eth);
        out
    }

    #[test]
    fn other_traffic_and_broken_frames_have_reasons() {
        let f = frame();
        let arp = edited(&f, |e, _, _| e.ethertype = EtherType::Arp);
        assert_eq!(parse_frame(&arp, 0), Err(Reject::NotProbe));
        let tcp = edited(&f, |_, ip, _| ip.protocol = 6);
        assert_eq!(parse_frame(&tcp, 0), Err(Reject::NotProbe));
        let port = edited(&f, |_, _, p| *p ^= 0xff);
        assert_eq!(parse_frame(&port, 0), Err(Reject::NotProbe));
        let mut sum = f.clone();
        let mut eth = EthernetFrame::new_checked(&mut sum[..]).unwrap();
        let mut ip = Ipv4Packet::new_checked(eth.payload_mut()).unwrap();
        ip.set_header_checksum(!ip.header_checksum());
        assert_eq!(parse_frame(&sum, 0), Err(Reject::Malformed));
        for n in 0..f.len() {
            assert!(parse_frame(&f[..n], 0).is_err(), "prefix {n} parsed");
        }
        assert_eq!(parse_packet_in(&[0, 1], 0), Err(Reject::Truncated));
    }

    #[test]
    fn counts_over_the_capacity_are_oversized_even_when_cut_short() {
        let f = frame();
        let body = udp_payload(&f);
        let mut sr = body[..SR_HEADER_LEN].to_vec();
        SrHeader::new_unchecked(&mut sr[..]).set_num_labels(MAX_HOPS as u8 + 1);
        assert_eq!(parse_udp_payload(&sr, 0), Err(Reject::Oversized));
        // The finished probe has no labels: its INT header follows the SR one.
        let mut int = body[..SR_HEADER_LEN + INT_HEADER_LEN + 4].to_vec();
        IntHeader::new_unchecked(&mut int[SR_HEADER_LEN..]).set_hop_count(MAX_HOPS as u8 + 1);
        assert_eq!(parse_udp_payload(&int, 0), Err(Reject::Oversized));
    }

    #[test]
    fn counts_by_reason() {
        let c = RejectCounts::default();
        c.count(Reject::OffPath);
        c.count(Reject::OffPath);
        c.count(Reject::Truncated);
        assert_eq!(c.snapshot(), vec![("truncated", 1), ("off_path", 2)]);
        assert_eq!(c.total(), 3);
    }
}
