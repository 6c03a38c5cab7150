//! The sample probe that switch, collector and generator tests and benches
//! send: one host (10.0.1.1) towards the collector (10.0.9.9), room for
//! [`MAX_HOPS`] records, built through `core::wire` like production probes.

use intpath_core::wire::{
    EtherType, EthernetRepr, IntRecordRepr, MacAddr, PayloadRepr, ProbeRepr, UdpPacket,
    ETHERNET_HEADER_LEN, IPV4_HEADER_LEN, MAX_HOPS,
};
use std::net::Ipv4Addr;

pub const SAMPLE_SRC_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
pub const SAMPLE_COLLECTOR_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 9, 9);

/// A fresh probe on `path_id`: no labels, no records, sent at time 0.
pub fn sample_probe(path_id: u16, sequence: u32) -> ProbeRepr {
    ProbeRepr::fresh(
        EthernetRepr {
            src: MacAddr([0, 0, 0, 0, 1, 1]),
            dst: MacAddr([0, 0, 0, 0, 2, 2]),
            ethertype: EtherType::Ipv4,
        },
        SAMPLE_SRC_IP,
        SAMPLE_COLLECTOR_IP,
        PayloadRepr {
            path_id,
            sequence,
            send_ts: 0,
        },
        MAX_HOPS as u8,
    )
}

/// The bytes of a probe on path 7 in transit: `labels` still to pop and
/// `records` (zeroed) already pushed.
pub fn transit_frame(labels: Vec<u16>, records: usize) -> Vec<u8> {
    let mut p = sample_probe(7, 1);
    p.sr.labels = labels;
    p.int.records = vec![IntRecordRepr::default(); records];
    p.int.remaining_hops = (MAX_HOPS - records) as u8;
    p.to_bytes().expect("a sample probe fits")
}

/// `frame` with its UDP destination port set to `port`: the same bytes
/// are plain IPv4/UDP to a switch when the port is not the probes' port.
pub fn with_udp_dst_port(mut frame: Vec<u8>, port: u16) -> Vec<u8> {
    UdpPacket::new_unchecked(&mut frame[ETHERNET_HEADER_LEN + IPV4_HEADER_LEN..])
        .set_dst_port(port);
    frame
}
