//! IPv4 header without options (probes never carry any; other packets with
//! options are forwarded untouched past the header this view reads).

use super::{be16, put16, Error, Result};
use std::net::Ipv4Addr;

pub const IPV4_HEADER_LEN: usize = 20;
pub const IP_PROTO_UDP: u8 = 17;

/// The Internet checksum (RFC 1071) of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Zero-copy view of an IPv4 packet.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Checks version, header length and that the buffer holds `total_len`.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        let len = p.buffer.as_ref().len();
        if len < IPV4_HEADER_LEN {
            return Err(Error::Truncated("IPv4 header"));
        }
        if p.version() != 4 {
            return Err(Error::Malformed("IPv4 version"));
        }
        if p.header_len() < IPV4_HEADER_LEN || p.header_len() > usize::from(p.total_len()) {
            return Err(Error::Malformed("IPv4 header length"));
        }
        if len < usize::from(p.total_len()) {
            return Err(Error::Truncated("IPv4 packet"));
        }
        Ok(p)
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn version(&self) -> u8 {
        self.b()[0] >> 4
    }

    pub fn header_len(&self) -> usize {
        usize::from(self.b()[0] & 0x0f) * 4
    }

    pub fn total_len(&self) -> u16 {
        be16(self.b(), 2)
    }

    pub fn ttl(&self) -> u8 {
        self.b()[8]
    }

    pub fn protocol(&self) -> u8 {
        self.b()[9]
    }

    pub fn header_checksum(&self) -> u16 {
        be16(self.b(), 10)
    }

    pub fn src_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.b()[12..16]).expect("4 bytes"))
    }

    pub fn dst_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.b()[16..20]).expect("4 bytes"))
    }

    pub fn verify_checksum(&self) -> bool {
        checksum(&self.b()[..self.header_len()]) == 0
    }

    /// The bytes after the header, up to `total_len`.
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    pub fn set_total_len(&mut self, v: u16) {
        put16(self.bm(), 2, v);
    }

    pub fn set_ttl(&mut self, v: u8) {
        self.bm()[8] = v;
    }

    pub fn set_dst_addr(&mut self, a: Ipv4Addr) {
        self.bm()[16..20].copy_from_slice(&a.octets());
    }

    /// Recomputes the header checksum after fields changed.
    pub fn fill_checksum(&mut self) {
        put16(self.bm(), 10, 0);
        let hl = self.header_len();
        let c = checksum(&self.b()[..hl]);
        put16(self.bm(), 10, c);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (hl, tl) = (self.header_len(), usize::from(self.total_len()));
        &mut self.bm()[hl..tl]
    }
}

/// Owned form of the IPv4 fields intpath sets (no options, DF set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub protocol: u8,
    pub ttl: u8,
    pub payload_len: usize,
}

impl Ipv4Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Self> {
        if !p.verify_checksum() {
            return Err(Error::Malformed("IPv4 checksum"));
        }
        Ok(Self {
            src: p.src_addr(),
            dst: p.dst_addr(),
            protocol: p.protocol(),
            ttl: p.ttl(),
            payload_len: usize::from(p.total_len()) - p.header_len(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        IPV4_HEADER_LEN
    }

    /// Writes the header; `buffer` must hold at least [`IPV4_HEADER_LEN`] bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<()> {
        let total = IPV4_HEADER_LEN + self.payload_len;
        let total = u16::try_from(total).map_err(|_| Error::Malformed("IPv4 total length"))?;
        let b = &mut buffer[..IPV4_HEADER_LEN];
        b[0] = 0x45;
        b[1] = 0;
        put16(b, 2, total);
        put16(b, 4, 0); // identification
        put16(b, 6, 0x4000); // DF, no fragments
        b[8] = self.ttl;
        b[9] = self.protocol;
        b[12..16].copy_from_slice(&self.src.octets());
        b[16..20].copy_from_slice(&self.dst.octets());
        put16(b, 10, 0);
        let c = checksum(b);
        put16(b, 10, c);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_then_parse_with_valid_checksum() {
        let repr = Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 1, 1),
            dst: Ipv4Addr::new(10, 0, 2, 2),
            protocol: IP_PROTO_UDP,
            ttl: 64,
            payload_len: 8,
        };
        let mut buf = [0u8; 28];
        repr.emit(&mut buf).unwrap();
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(Ipv4Repr::parse(&p).unwrap(), repr);
        let mut bad = buf;
        bad[8] = 63;
        let p = Ipv4Packet::new_checked(&bad[..]).unwrap();
        assert_eq!(Ipv4Repr::parse(&p), Err(Error::Malformed("IPv4 checksum")));
    }

    #[test]
    fn total_length_beyond_buffer_is_truncated() {
        let repr = Ipv4Repr {
            src: Ipv4Addr::LOCALHOST,
            dst: Ipv4Addr::LOCALHOST,
            protocol: IP_PROTO_UDP,
            ttl: 1,
            payload_len: 100,
        };
        let mut buf = [0u8; 40];
        repr.emit(&mut buf).unwrap();
        assert_eq!(
            Ipv4Packet::new_checked(&buf[..]).unwrap_err(),
            Error::Truncated("IPv4 packet")
        );
    }
}
