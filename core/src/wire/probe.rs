//! A whole probe frame, and the payload the probe generator writes last.
//!
//! ```text
//!  0               1               2               3
//! +---------------+---------------+---------------+---------------+
//! |            path_id            |           reserved            |
//! |                           sequence                            |
//! |                 send_ts (ns since the Unix epoch)             |
//! ```

use super::*;
use std::net::Ipv4Addr;

mod field {
    use crate::wire::Field;
    pub const PATH_ID: Field = 0..2;
    pub const RESERVED: Field = 2..4;
    pub const SEQUENCE: Field = 4..8;
    pub const SEND_TS: Field = 8..16;
}

/// Bytes of the probe payload, which always ends the probe.
pub const PROBE_PAYLOAD_LEN: usize = field::SEND_TS.end;

/// Zero-copy view of the probe payload.
#[derive(Debug, Clone)]
pub struct ProbePayload<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ProbePayload<T> {
    /// Wraps `buffer` without a length check, for bytes already checked or
    /// built to size: the accessors panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Wraps `buffer` once its length is checked, so that the accessors can
    /// index without further checks.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < PROBE_PAYLOAD_LEN {
            return Err(Error::Truncated("probe payload"));
        }
        Ok(Self { buffer })
    }

    /// Which planned path the probe took: the collector's key to the links
    /// its records measure.
    pub fn path_id(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::PATH_ID)
    }

    /// Per-path sequence number, from which the collector counts lost probes.
    pub fn sequence(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::SEQUENCE)
    }

    /// When the generator sent the probe (ns since the Unix epoch, generator
    /// clock).
    pub fn send_ts(&self) -> u64 {
        read_u64(self.buffer.as_ref(), field::SEND_TS)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ProbePayload<T> {
    /// Sets the path id.
    pub fn set_path_id(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::PATH_ID, v);
    }

    /// Sets the reserved bytes (zero on everything intpath emits).
    pub fn set_reserved(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::RESERVED, v);
    }

    /// Sets the sequence number.
    pub fn set_sequence(&mut self, v: u32) {
        write_u32(self.buffer.as_mut(), field::SEQUENCE, v);
    }

    /// Sets the send timestamp (ns since the Unix epoch).
    pub fn set_send_ts(&mut self, v: u64) {
        write_u64(self.buffer.as_mut(), field::SEND_TS, v);
    }
}

/// Owned form of the probe payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PayloadRepr {
    /// Which planned path the probe took.
    pub path_id: u16,
    /// Per-path sequence number.
    pub sequence: u32,
    /// Nanoseconds since the Unix epoch, generator clock.
    pub send_ts: u64,
}

impl PayloadRepr {
    /// Copies the fields out, for code that compares or edits headers rather
    /// than bytes.
    pub fn parse<T: AsRef<[u8]>>(p: &ProbePayload<T>) -> Self {
        Self {
            path_id: p.path_id(),
            sequence: p.sequence(),
            send_ts: p.send_ts(),
        }
    }

    /// Writes every field; the view must hold [`PROBE_PAYLOAD_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut ProbePayload<T>) {
        p.set_path_id(self.path_id);
        p.set_reserved(0);
        p.set_sequence(self.sequence);
        p.set_send_ts(self.send_ts);
    }
}

/// Every field of a probe frame, from Ethernet to payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeRepr {
    /// The Ethernet header.
    pub eth: EthernetRepr,
    /// The generator's address.
    pub ip_src: Ipv4Addr,
    /// The collector.
    pub ip_dst: Ipv4Addr,
    /// IPv4 TTL (64 when sent).
    pub ttl: u8,
    /// UDP source port ([`SRINT_UDP_PORT`] when sent).
    pub udp_src_port: u16,
    /// The route: path id and labels still to take.
    pub sr: SrRepr,
    /// The records pushed so far.
    pub int: IntRepr,
    /// The generator's payload.
    pub payload: PayloadRepr,
}

impl ProbeRepr {
    /// A probe as the generator sends it: no labels (the first switch pushes
    /// them), no records, and a hop budget of `remaining_hops`.
    pub fn fresh(
        eth: EthernetRepr,
        ip_src: Ipv4Addr,
        ip_dst: Ipv4Addr,
        payload: PayloadRepr,
        remaining_hops: u8,
    ) -> Self {
        Self {
            eth,
            ip_src,
            ip_dst,
            ttl: 64,
            udp_src_port: SRINT_UDP_PORT,
            sr: SrRepr {
                path_id: payload.path_id,
                flags: 0,
                labels: Vec::new(),
            },
            int: IntRepr {
                remaining_hops,
                records: Vec::new(),
            },
            payload,
        }
    }

    /// Parses a whole Ethernet frame. The SR, INT and payload sections must
    /// fill the UDP datagram exactly: anything more is malformed.
    pub fn parse(frame: &[u8]) -> Result<Self> {
        let eth_frame = EthernetFrame::new_checked(frame)?;
        let eth = EthernetRepr::parse(&eth_frame)?;
        if eth.ethertype != EtherType::Ipv4 {
            return Err(Error::Malformed("EtherType (not IPv4)"));
        }
        let ip = Ipv4Packet::new_checked(eth_frame.payload())?;
        let ip_repr = Ipv4Repr::parse(&ip)?;
        if ip_repr.protocol != IP_PROTO_UDP {
            return Err(Error::Malformed("IP protocol (not UDP)"));
        }
        let udp = UdpPacket::new_checked(ip.payload())?;
        if udp.dst_port() != SRINT_UDP_PORT {
            return Err(Error::Malformed("UDP port (not SR-INT)"));
        }
        let body = udp.payload();
        let sr_h = SrHeader::new_checked(body)?;
        let sr = SrRepr::parse(&sr_h)?;
        let body = &body[sr_h.header_len()..];
        let int_h = IntHeader::new_checked(body)?;
        let int = IntRepr::parse(&int_h)?;
        let body = &body[int_h.header_len()..];
        let payload = PayloadRepr::parse(&ProbePayload::new_checked(body)?);
        if body.len() != PROBE_PAYLOAD_LEN {
            return Err(Error::Malformed("probe length (bytes after payload)"));
        }
        Ok(Self {
            eth,
            ip_src: ip_repr.src,
            ip_dst: ip_repr.dst,
            ttl: ip_repr.ttl,
            udp_src_port: udp.src_port(),
            sr,
            int,
            payload,
        })
    }

    fn udp_payload_len(&self) -> usize {
        self.sr.buffer_len() + self.int.buffer_len() + PROBE_PAYLOAD_LEN
    }

    /// Length of the whole Ethernet frame.
    pub fn buffer_len(&self) -> usize {
        ETHERNET_HEADER_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN + self.udp_payload_len()
    }

    /// Writes the frame into `buffer`; `Oversized` when it does not fit.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<()> {
        if buffer.len() < self.buffer_len() {
            return Err(Error::Oversized("probe for its buffer"));
        }
        let mut eth = EthernetFrame::new_unchecked(&mut *buffer);
        self.eth.emit(&mut eth);
        let udp_len = UDP_HEADER_LEN + self.udp_payload_len();
        let mut ip = Ipv4Packet::new_unchecked(eth.payload_mut());
        Ipv4Repr {
            src: self.ip_src,
            dst: self.ip_dst,
            protocol: IP_PROTO_UDP,
            ttl: self.ttl,
            payload_len: udp_len,
        }
        .emit(&mut ip)?;
        let mut udp = UdpPacket::new_unchecked(ip.payload_mut());
        UdpRepr {
            src_port: self.udp_src_port,
            dst_port: SRINT_UDP_PORT,
            payload_len: self.udp_payload_len(),
        }
        .emit(&mut udp)?;
        let body = &mut udp.into_inner()[UDP_HEADER_LEN..];
        let (sr, body) = body.split_at_mut(self.sr.buffer_len());
        self.sr.emit(&mut SrHeader::new_unchecked(sr))?;
        let (int, payload) = body.split_at_mut(self.int.buffer_len());
        self.int.emit(&mut IntHeader::new_unchecked(int))?;
        self.payload.emit(&mut ProbePayload::new_unchecked(payload));
        Ok(())
    }

    /// The whole frame in a new buffer, for senders that keep no buffer of
    /// their own.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; self.buffer_len()];
        self.emit(&mut buf)?;
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ProbeRepr {
        let mut p = ProbeRepr::fresh(
            EthernetRepr {
                src: MacAddr([0, 0, 0, 0, 1, 1]),
                dst: MacAddr([0, 0, 0, 0, 2, 2]),
                ethertype: EtherType::Ipv4,
            },
            Ipv4Addr::new(10, 0, 1, 1),
            Ipv4Addr::new(10, 0, 9, 9),
            PayloadRepr {
                path_id: 3,
                sequence: 42,
                send_ts: 1_700_000_000_000_000_000,
            },
            MAX_HOPS as u8,
        );
        p.sr.labels = vec![2, 3];
        p.int.records.push(IntRecordRepr {
            switch_id: 1,
            ingress_port: 1,
            egress_port: 2,
            ..Default::default()
        });
        p
    }

    #[test]
    fn frame_roundtrip() {
        let p = sample();
        let bytes = p.to_bytes().unwrap();
        assert_eq!(bytes.len(), 14 + 20 + 8 + 4 + 4 + 4 + 32 + 16);
        assert_eq!(ProbeRepr::parse(&bytes).unwrap(), p);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = sample().to_bytes().unwrap();
        for n in 0..bytes.len() {
            assert!(ProbeRepr::parse(&bytes[..n]).is_err(), "prefix {n} parsed");
        }
    }

    #[test]
    fn golden_payload_bytes() {
        let mut buf = [0xaau8; PROBE_PAYLOAD_LEN];
        PayloadRepr {
            path_id: 0x0203,
            sequence: 0x0a0b_0c0d,
            send_ts: 0x0102_0304_0506_0708,
        }
        .emit(&mut ProbePayload::new_unchecked(&mut buf[..]));
        assert_eq!(
            buf,
            [2, 3, 0, 0, 0x0a, 0x0b, 0x0c, 0x0d, 1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    fn a_probe_that_does_not_fit_is_oversized() {
        let p = sample();
        let mut buf = vec![0u8; p.buffer_len() - 1];
        assert_eq!(
            p.emit(&mut buf),
            Err(Error::Oversized("probe for its buffer"))
        );
    }

    #[test]
    fn trailing_bytes_are_rejected() {
        let p = sample();
        let mut bytes = p.to_bytes().unwrap();
        // Grow the IPv4 and UDP lengths by 4 and append 4 bytes.
        bytes.extend_from_slice(&[0; 4]);
        let mut eth = EthernetFrame::new_unchecked(&mut bytes[..]);
        let mut ip = Ipv4Packet::new_unchecked(eth.payload_mut());
        ip.set_total_len(ip.total_len() + 4);
        ip.fill_checksum();
        let mut udp = UdpPacket::new_unchecked(&mut ip.into_inner()[IPV4_HEADER_LEN..]);
        udp.set_len(udp.len() + 4);
        assert_eq!(
            ProbeRepr::parse(&bytes).unwrap_err(),
            Error::Malformed("probe length (bytes after payload)")
        );
    }
}
