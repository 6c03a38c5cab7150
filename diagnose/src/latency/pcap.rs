//! Reading a capture file into transport segments.
//!
//! `pcap-file` reads the records and `etherparse` the headers; the lax
//! slicer is used because captures are often cut at a snap length (`tcpdump
//! -s 96`): the headers are all Pirate needs, and the payload length comes
//! from the IP header, not from the bytes captured. Records are read raw
//! because `pcap-file` 2 rejects a record whose original length exceeds the
//! snap length, which is exactly what a snap-length capture holds.
//!
//! Anything that is not a TCP or UDP segment over IPv4/IPv6 (ARP, ICMP, IP
//! fragments, headers cut short) is counted as a skip by reason, never an
//! error; a file that is not a pcap, a link type not read here or a broken
//! record is an error naming the file and the record.

use super::LatencyError;
use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket, TcpOptionElement, TransportSlice};
use pcap_file::pcap::{PcapReader, RawPcapPacket};
use pcap_file::{DataLink, PcapError, TsResolution};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

/// The transport a segment used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Transport {
    Tcp,
    Udp,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
        }
    }
}

/// One TCP or UDP segment of the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Capture time, ns since the Unix epoch.
    pub at_ns: i64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub transport: Transport,
    /// Payload bytes as sent (from the IP and transport lengths).
    pub payload: u32,
    pub syn: bool,
    pub ack: bool,
    pub fin: bool,
    pub rst: bool,
    /// A SYN's MSS option.
    pub mss: Option<u16>,
}

impl Segment {
    /// A TCP segment with ACK set and no other flag, carrying `payload`
    /// bytes: what a client sends mid-connection (a pure ACK when empty).
    pub fn tcp_ack(at_ns: i64, src: SocketAddr, dst: SocketAddr, payload: u32) -> Self {
        Segment {
            at_ns,
            src,
            dst,
            transport: Transport::Tcp,
            payload,
            syn: false,
            ack: true,
            fin: false,
            rst: false,
            mss: None,
        }
    }

    /// A TCP segment that carries only an acknowledgement.
    pub fn pure_ack(&self) -> bool {
        self.transport == Transport::Tcp
            && self.payload == 0
            && self.ack
            && !(self.syn || self.fin || self.rst)
    }
}

/// How the link layer of every record starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Ethernet,
    /// Linux cooked capture v1 (16-byte header, protocol at 14).
    Sll,
    /// Linux cooked capture v2 (20-byte header, protocol at 0).
    Sll2,
    /// No link header: IPv4 or IPv6 straight away.
    RawIp,
    /// BSD loopback: a 4-byte address family, then IP.
    Loopback,
}

/// A pcap file being read segment by segment.
pub struct Capture {
    name: String,
    reader: PcapReader<BufReader<File>>,
    link: Link,
    nanos: bool,
    /// Records read so far.
    pub records: u64,
    /// Records that gave no segment, by reason.
    pub skipped: BTreeMap<&'static str, u64>,
}

impl Capture {
    /// Opens `path` and checks its header and link type.
    pub fn open(path: &Path) -> Result<Self, LatencyError> {
        let name = path.display().to_string();
        let mut file = File::open(path).map_err(|e| LatencyError::Open(name.clone(), e))?;
        let mut magic = [0u8; 4];
        if file.read_exact(&mut magic).is_ok() && magic == [0x0a, 0x0d, 0x0d, 0x0a] {
            return Err(LatencyError::PcapNg(name));
        }
        let file = File::open(path).map_err(|e| LatencyError::Open(name.clone(), e))?;
        let reader = PcapReader::new(BufReader::new(file))
            .map_err(|e| LatencyError::NotPcap(name.clone(), describe(&e, "the file header")))?;
        let header = reader.header();
        let link = match header.datalink {
            DataLink::ETHERNET => Link::Ethernet,
            DataLink::LINUX_SLL => Link::Sll,
            DataLink::LINUX_SLL2 => Link::Sll2,
            DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => Link::RawIp,
            DataLink::NULL | DataLink::LOOP => Link::Loopback,
            other => return Err(LatencyError::LinkType(name, format!("{other:?}"))),
        };
        Ok(Capture {
            name,
            reader,
            link,
            nanos: header.ts_resolution == TsResolution::NanoSecond,
            records: 0,
            skipped: BTreeMap::new(),
        })
    }

    /// The next TCP or UDP segment; `None` at the end of the file. A record
    /// cut off by the end of the file (a capture stopped while writing) ends
    /// the reading as a counted skip.
    pub fn next_segment(&mut self) -> Result<Option<Segment>, LatencyError> {
        loop {
            let raw = match self.reader.next_raw_packet() {
                None => return Ok(None),
                Some(Ok(raw)) => raw,
                Some(Err(PcapError::IoError(e)))
                    if e.kind() == std::io::ErrorKind::UnexpectedEof =>
                {
                    *self
                        .skipped
                        .entry("record cut off by the end of the file")
                        .or_insert(0) += 1;
                    return Ok(None);
                }
                Some(Err(e)) => {
                    return Err(LatencyError::Record {
                        name: self.name.clone(),
                        record: self.records + 1,
                        why: describe(&e, "the record"),
                    })
                }
            };
            self.records += 1;
            let at_ns = timestamp(&raw, self.nanos).ok_or_else(|| LatencyError::Record {
                name: self.name.clone(),
                record: self.records,
                why: "timestamp out of range".into(),
            })?;
            match segment(self.link, &raw.data, at_ns) {
                Ok(s) => return Ok(Some(s)),
                Err(reason) => *self.skipped.entry(reason).or_insert(0) += 1,
            }
        }
    }
}

/// A pcap error in words (pcap-file's own texts say "Need more bytes" and
/// the like, without saying where).
fn describe(e: &PcapError, what: &str) -> String {
    match e {
        PcapError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("{what} is cut short")
        }
        PcapError::IncompleteBuffer => format!("{what} is cut short"),
        other => format!("{what}: {other}"),
    }
}

/// A record's time in ns since the Unix epoch.
fn timestamp(raw: &RawPcapPacket, nanos: bool) -> Option<i64> {
    let frac = if nanos {
        i64::from(raw.ts_frac)
    } else {
        i64::from(raw.ts_frac).checked_mul(1_000)?
    };
    if frac >= 1_000_000_000 {
        return None;
    }
    i64::from(raw.ts_sec)
        .checked_mul(1_000_000_000)?
        .checked_add(frac)
}

/// Parses one record's bytes; `Err` is the reason it holds no segment.
fn segment(link: Link, data: &[u8], at_ns: i64) -> Result<Segment, &'static str> {
    const CUT: &str = "link header cut short";
    let p = match link {
        Link::Ethernet => LaxSlicedPacket::from_ethernet(data).map_err(|_| CUT)?,
        Link::Sll => {
            let proto = data.get(14..16).ok_or(CUT)?;
            let rest = data.get(16..).ok_or(CUT)?;
            LaxSlicedPacket::from_ether_type(
                EtherType(u16::from_be_bytes([proto[0], proto[1]])),
                rest,
            )
        }
        Link::Sll2 => {
            let proto = data.get(0..2).ok_or(CUT)?;
            let rest = data.get(20..).ok_or(CUT)?;
            LaxSlicedPacket::from_ether_type(
                EtherType(u16::from_be_bytes([proto[0], proto[1]])),
                rest,
            )
        }
        Link::RawIp => {
            LaxSlicedPacket::from_ip(data).map_err(|_| "IP header malformed or cut short")?
        }
        Link::Loopback => LaxSlicedPacket::from_ip(data.get(4..).ok_or(CUT)?)
            .map_err(|_| "IP header malformed or cut short")?,
    };
    let (src, dst, ip_payload) = match &p.net {
        Some(LaxNetSlice::Ipv4(v4)) => {
            let h = v4.header();
            let pl = v4.payload();
            if pl.fragmented {
                return Err("IP fragment");
            }
            let from_header = usize::from(h.total_len())
                .saturating_sub(h.slice().len())
                .saturating_sub(v4.extensions().auth.map_or(0, |a| a.slice().len()));
            let len = if pl.incomplete {
                from_header
            } else {
                pl.payload.len()
            };
            (
                IpAddr::V4(h.source_addr()),
                IpAddr::V4(h.destination_addr()),
                len,
            )
        }
        Some(LaxNetSlice::Ipv6(v6)) => {
            let h = v6.header();
            let pl = v6.payload();
            if pl.fragmented {
                return Err("IP fragment");
            }
            let from_header =
                usize::from(h.payload_length()).saturating_sub(v6.extensions().slice().len());
            let len = if pl.incomplete {
                from_header
            } else {
                pl.payload.len()
            };
            (
                IpAddr::V6(h.source_addr()),
                IpAddr::V6(h.destination_addr()),
                len,
            )
        }
        Some(LaxNetSlice::Arp(_)) | None if p.stop_err.is_some() => {
            return Err("network header malformed or cut short")
        }
        _ => return Err("not IP"),
    };
    let seg = |sp: u16, dp: u16, transport, payload: usize| Segment {
        at_ns,
        src: SocketAddr::new(src, sp),
        dst: SocketAddr::new(dst, dp),
        transport,
        payload: u32::try_from(payload).unwrap_or(u32::MAX),
        syn: false,
        ack: false,
        fin: false,
        rst: false,
        mss: None,
    };
    match &p.transport {
        Some(TransportSlice::Tcp(t)) => {
            let header = usize::from(t.data_offset()) * 4;
            let mss = if t.syn() {
                t.options_iterator().find_map(|o| match o {
                    Ok(TcpOptionElement::MaximumSegmentSize(m)) => Some(m),
                    _ => None,
                })
            } else {
                None
            };
            Ok(Segment {
                syn: t.syn(),
                ack: t.ack(),
                fin: t.fin(),
                rst: t.rst(),
                mss,
                ..seg(
                    t.source_port(),
                    t.destination_port(),
                    Transport::Tcp,
                    ip_payload.saturating_sub(header),
                )
            })
        }
        Some(TransportSlice::Udp(u)) => Ok(seg(
            u.source_port(),
            u.destination_port(),
            Transport::Udp,
            usize::from(u.length()).saturating_sub(8),
        )),
        Some(_) => Err("not TCP or UDP"),
        None if p.stop_err.is_some() => Err("transport header malformed or cut short"),
        None => Err("not TCP or UDP"),
    }
}
