//! Capture files for the response-latency tests: TCP/IPv4 frames built with
//! `etherparse`, written with `pcap-file`, in the link types the reader
//! must handle (Ethernet, Linux cooked v1).

use etherparse::PacketBuilder;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::net::SocketAddrV4;
use std::path::Path;
use std::time::Duration;

/// One TCP segment to put in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tcp {
    /// ns since the Unix epoch.
    pub at_ns: i64,
    pub src: SocketAddrV4,
    pub dst: SocketAddrV4,
    pub payload: usize,
    pub syn: bool,
    pub ack: bool,
}

impl Tcp {
    /// A data segment with ACK set, as a client sends mid-connection.
    pub fn data(at_ns: i64, src: &str, dst: &str, payload: usize) -> Self {
        Tcp {
            at_ns,
            src: src.parse().expect("an IPv4 socket address"),
            dst: dst.parse().expect("an IPv4 socket address"),
            payload,
            syn: false,
            ack: true,
        }
    }
}

/// The Ethernet/IPv4/TCP frame of `t`.
pub fn ethernet_frame(t: &Tcp) -> Vec<u8> {
    let mut b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(t.src.ip().octets(), t.dst.ip().octets(), 64)
        .tcp(t.src.port(), t.dst.port(), 1000, 65535);
    if t.syn {
        b = b.syn();
    }
    if t.ack {
        b = b.ack(1);
    }
    let payload = vec![0x61; t.payload];
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, &payload).expect("frame written");
    out
}

/// The same segment behind a Linux cooked (SLL v1) header instead of
/// Ethernet.
pub fn sll_frame(t: &Tcp) -> Vec<u8> {
    let eth = ethernet_frame(t);
    // Packet type 4 (sent by us), ARPHRD_ETHER, 6-byte address, padded.
    let mut out = vec![0, 4, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    out.extend_from_slice(&eth[12..]); // protocol, then the IP packet
    out
}

/// Writes `frames` (time in ns since the Unix epoch, bytes) to a pcap file
/// of link type `link`, nanosecond timestamps; each frame cut to `snaplen`
/// bytes as a snap-length capture would.
pub fn write(path: &Path, link: DataLink, snaplen: u32, frames: &[(i64, Vec<u8>)]) {
    let file = std::fs::File::create(path).expect("pcap file created");
    let header = PcapHeader {
        datalink: link,
        snaplen,
        ts_resolution: TsResolution::NanoSecond,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(file, header).expect("pcap header written");
    for (at, data) in frames {
        let cut = &data[..data.len().min(snaplen as usize)];
        let at = Duration::from_nanos(u64::try_from(*at).expect("a time after 1970"));
        // Not `write_packet`: pcap-file 2 refuses an original length above
        // the snap length, which is what a cut capture holds.
        let raw = pcap_file::pcap::RawPcapPacket {
            ts_sec: at.as_secs() as u32,
            ts_frac: at.subsec_nanos(),
            incl_len: cut.len() as u32,
            orig_len: data.len() as u32,
            data: cut.into(),
        };
        w.write_raw_packet(&raw).expect("record written");
    }
}

/// Writes a file of whole Ethernet frames from `segments`.
pub fn write_ethernet(path: &Path, segments: &[Tcp]) {
    let frames: Vec<(i64, Vec<u8>)> = segments
        .iter()
        .map(|t| (t.at_ns, ethernet_frame(t)))
        .collect();
    write(path, DataLink::ETHERNET, 65535, &frames);
}

/// The record a capture thread writes: keeps `PcapPacket` in the API of
/// callers that have whole frames only.
pub fn packet(at: Duration, frame: &[u8]) -> PcapPacket<'_> {
    PcapPacket::new(at, frame.len() as u32, frame)
}
