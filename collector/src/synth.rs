//! Finished probes as the switches of a planned path would deliver them, for
//! tests, benchmarks and demos without a network.

use intpath_core::plan::ProbePath;
use intpath_core::wire::{
    EtherType, EthernetRepr, IntRecordRepr, IntRepr, MacAddr, PayloadRepr, ProbeRepr, SrRepr,
    MAX_HOPS, SRINT_UDP_PORT, SR_FLAG_DONE,
};
use intpath_store::LinkMap;
use std::net::Ipv4Addr;

/// Microseconds a packet ahead in the queue delays a probe (1500 B at 1 Gb/s).
pub const US_PER_QUEUED_PACKET: u32 = 12;

/// How one probe is timed and what the queues held.
pub struct Conditions<'a> {
    pub sequence: u32,
    pub send_ns: u64,
    /// Queue depth (packets) at the egress onto each directed link.
    pub qdepth: &'a dyn Fn(u32) -> u32,
    /// The sink's port towards the collector.
    pub sink_port: u16,
}

/// The probe of `path` after its sink: DONE, no labels, one record per
/// switch (newest first); switch clocks are the send time in µs plus the
/// hop's link and queueing delays.
pub fn finished_probe(path: &ProbePath, links: &LinkMap, c: &Conditions<'_>) -> ProbeRepr {
    let mut records = Vec::with_capacity(path.nodes.len());
    let mut clock_us = c.send_ns / 1_000;
    let mut ingress_port = 0;
    for (i, node) in path.nodes.iter().enumerate() {
        let egress_port = path.egress_ports.get(i).copied().unwrap_or(c.sink_port);
        let link = links.egress_link(node, egress_port);
        if let Some(switch_id) = links.switch_id(node) {
            let q = link.map_or(0, c.qdepth);
            let wait = q * US_PER_QUEUED_PACKET;
            records.push(IntRecordRepr {
                switch_id,
                ingress_port,
                egress_port,
                ingress_ts: clock_us,
                egress_ts: clock_us + u64::from(wait) + 2,
                enq_qdepth: q,
                deq_timedelta: wait,
            });
            clock_us += u64::from(wait) + 7;
        }
        ingress_port = link.and_then(|l| links.link(l)).map_or(0, |l| l.dst_port);
    }
    records.reverse();
    ProbeRepr {
        eth: EthernetRepr {
            src: MacAddr([0x02, 0, 0, 0, 0, 0x01]),
            dst: MacAddr([0x02, 0, 0, 0, 0, 0xc0]),
            ethertype: EtherType::Ipv4,
        },
        ip_src: Ipv4Addr::new(10, 0, 0, 1),
        ip_dst: Ipv4Addr::new(10, 0, 255, 1),
        ttl: 60,
        udp_src_port: SRINT_UDP_PORT,
        sr: SrRepr {
            path_id: path.id,
            flags: SR_FLAG_DONE,
            labels: Vec::new(),
        },
        int: IntRepr {
            remaining_hops: MAX_HOPS.saturating_sub(records.len()) as u8,
            records,
        },
        payload: PayloadRepr {
            path_id: path.id,
            sequence: c.sequence,
            send_ts: c.send_ns,
        },
    }
}

/// The UDP payload of a probe (what the socket source receives).
pub fn udp_payload(p: &ProbeRepr) -> Vec<u8> {
    let frame = p.to_bytes().unwrap_or_default();
    let skip = intpath_core::wire::ETHERNET_HEADER_LEN
        + intpath_core::wire::IPV4_HEADER_LEN
        + intpath_core::wire::UDP_HEADER_LEN;
    frame.get(skip..).map(<[u8]>::to_vec).unwrap_or_default()
}
