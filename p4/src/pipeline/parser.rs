//! The P4 parser of `sr_int.p4` and the length check ingress applies to a
//! probe: everything that only reads a frame.

use super::{IPV4_AT, SR_AT, UDP_AT};
use intpath_core::wire::SrHeader;
use intpath_core::wire::{
    EtherType, EthernetFrame, IntHeader, Ipv4Packet, UdpPacket, INT_HEADER_LEN, INT_RECORD_LEN,
    IPV4_HEADER_LEN, IP_PROTO_UDP, PROBE_PAYLOAD_LEN, SRINT_UDP_PORT, SR_HEADER_LEN, SR_LABEL_LEN,
    UDP_HEADER_LEN,
};

/// What the parser found.
pub(super) enum Parsed {
    /// Not IPv4: no table applies.
    Other,
    Ipv4,
    Probe {
        num_labels: usize,
        hop_count: u8,
    },
}

/// The P4 parser: Ethernet, IPv4 (version 4, no options), UDP to port 9555,
/// SR with its labels, INT with its records, payload. Any extraction past the
/// end of the frame, or a failed `verify`, is a parser error. Lengths in the
/// headers are not the parser's business (ingress checks a probe's).
pub(super) fn parse(frame: &[u8]) -> Result<Parsed, ()> {
    let eth = EthernetFrame::new_checked(frame).map_err(|_| ())?;
    if eth.ethertype() != EtherType::Ipv4 {
        return Ok(Parsed::Other);
    }
    let ip = Ipv4Packet::new_header_checked(eth.payload()).map_err(|_| ())?;
    if ip.header_len() != IPV4_HEADER_LEN {
        return Err(());
    }
    if ip.protocol() != IP_PROTO_UDP {
        return Ok(Parsed::Ipv4);
    }
    let udp = UdpPacket::new_header_checked(&frame[UDP_AT..]).map_err(|_| ())?;
    if udp.dst_port() != SRINT_UDP_PORT {
        return Ok(Parsed::Ipv4);
    }
    let sr = SrHeader::new_checked(&frame[SR_AT..]).map_err(|_| ())?;
    let int_at = SR_AT + sr.header_len();
    let int = IntHeader::new_checked(&frame[int_at..]).map_err(|_| ())?;
    if frame.len() < int_at + int.header_len() + PROBE_PAYLOAD_LEN {
        return Err(());
    }
    Ok(Parsed::Probe {
        num_labels: usize::from(sr.num_labels()),
        hop_count: int.hop_count(),
    })
}

/// A probe must fill its UDP datagram and its IPv4 packet exactly.
pub(super) fn probe_lengths_ok(frame: &[u8], num_labels: usize, hop_count: u8) -> bool {
    let udp_len = UDP_HEADER_LEN
        + SR_HEADER_LEN
        + num_labels * SR_LABEL_LEN
        + INT_HEADER_LEN
        + usize::from(hop_count) * INT_RECORD_LEN
        + PROBE_PAYLOAD_LEN;
    let ip = Ipv4Packet::new_unchecked(&frame[IPV4_AT..]);
    let udp = UdpPacket::new_unchecked(&frame[UDP_AT..]);
    usize::from(udp.len()) == udp_len && usize::from(ip.total_len()) == udp_len + IPV4_HEADER_LEN
}
