//! IPv4 header without options (probes never carry any; other packets with
//! options are forwarded untouched past the header this view reads).

use super::{read_u16, write_u16, Error, Result};
use std::net::Ipv4Addr;

mod field {
    use crate::wire::Field;
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
}

/// Bytes of an IPv4 header without options, the only kind intpath emits.
pub const IPV4_HEADER_LEN: usize = field::DST_ADDR.end;
/// The protocol number of UDP, which probes ride on.
pub const IP_PROTO_UDP: u8 = 17;
/// The flags and fragment offset of an unfragmented datagram with DF set.
const DONT_FRAGMENT: u16 = 0x4000;
/// More-fragments flag and the 13-bit fragment offset.
const MORE_FRAGMENTS: u16 = 0x2000;
const FRAG_OFFSET: u16 = 0x1fff;

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
    /// Wraps `buffer` without a length check, for bytes already checked or
    /// built to size: the accessors panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Checks version, header length and that the buffer holds `total_len`.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_header_checked(buffer)?;
        if p.header_len() < IPV4_HEADER_LEN || p.header_len() > usize::from(p.total_len()) {
            return Err(Error::Malformed("IPv4 header length"));
        }
        if p.b().len() < usize::from(p.total_len()) {
            return Err(Error::Truncated("IPv4 packet"));
        }
        Ok(p)
    }

    /// Checks only that the fixed header is there and says version 4, as a P4
    /// parser does: lengths are the program's business.
    pub fn new_header_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        if p.b().len() < IPV4_HEADER_LEN {
            return Err(Error::Truncated("IPv4 header"));
        }
        if p.version() != 4 {
            return Err(Error::Malformed("IPv4 version"));
        }
        Ok(p)
    }

    /// Gives the buffer back, to reach the bytes after this header.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// The IP version (4 for a packet this view should read).
    pub fn version(&self) -> u8 {
        self.b()[field::VER_IHL] >> 4
    }

    /// Header length in bytes, options included: where the payload starts.
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[field::VER_IHL] & 0x0f) * 4
    }

    /// DSCP and ECN, carried through unchanged.
    pub fn dscp_ecn(&self) -> u8 {
        self.b()[field::DSCP_ECN]
    }

    /// Bytes of header and payload; the frame may be longer (Ethernet padding).
    pub fn total_len(&self) -> u16 {
        read_u16(self.b(), field::LENGTH)
    }

    /// The identification field.
    pub fn ident(&self) -> u16 {
        read_u16(self.b(), field::IDENT)
    }

    /// Flags (top 3 bits) and fragment offset.
    pub fn flags_frag(&self) -> u16 {
        read_u16(self.b(), field::FLG_OFF)
    }

    /// A piece of a larger datagram (more-fragments set or an offset): no
    /// whole probe, since intpath probes are sent with DF and never split.
    pub fn is_fragment(&self) -> bool {
        self.flags_frag() & (MORE_FRAGMENTS | FRAG_OFFSET) != 0
    }

    /// Hops left; a forwarder drops the packet at zero so that loops end.
    pub fn ttl(&self) -> u8 {
        self.b()[field::TTL]
    }

    /// What the payload is (probes are [`IP_PROTO_UDP`]).
    pub fn protocol(&self) -> u8 {
        self.b()[field::PROTOCOL]
    }

    /// The header checksum as carried (see [`Self::verify_checksum`]).
    pub fn header_checksum(&self) -> u16 {
        read_u16(self.b(), field::CHECKSUM)
    }

    /// The sender.
    pub fn src_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.b()[field::SRC_ADDR]).expect("4 bytes"))
    }

    /// The destination, which routes ordinary packets (a probe's is the
    /// collector).
    pub fn dst_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.b()[field::DST_ADDR]).expect("4 bytes"))
    }

    /// Whether the checksum over the header (`header_len` bytes) is right.
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

    /// Version and header length (in bytes, a multiple of 4).
    pub fn set_version_header_len(&mut self, version: u8, header_len: usize) {
        self.bm()[field::VER_IHL] = (version << 4) | ((header_len / 4) as u8 & 0x0f);
    }

    /// Sets DSCP and ECN.
    pub fn set_dscp_ecn(&mut self, v: u8) {
        self.bm()[field::DSCP_ECN] = v;
    }

    /// Sets the total length (header and payload).
    pub fn set_total_len(&mut self, v: u16) {
        write_u16(self.bm(), field::LENGTH, v);
    }

    /// Sets the identification field.
    pub fn set_ident(&mut self, v: u16) {
        write_u16(self.bm(), field::IDENT, v);
    }

    /// Sets flags and fragment offset (probes: DF, offset 0).
    pub fn set_flags_frag(&mut self, v: u16) {
        write_u16(self.bm(), field::FLG_OFF, v);
    }

    /// Sets the TTL.
    pub fn set_ttl(&mut self, v: u8) {
        self.bm()[field::TTL] = v;
    }

    /// TTL minus one; the checksum is left to [`Self::fill_checksum`], which
    /// a forwarder runs once after all its edits.
    pub fn decrement_ttl(&mut self) {
        let ttl = self.ttl();
        self.set_ttl(ttl.wrapping_sub(1));
    }

    /// Sets the protocol.
    pub fn set_protocol(&mut self, v: u8) {
        self.bm()[field::PROTOCOL] = v;
    }

    /// Sets the checksum as given; [`Self::fill_checksum`] computes it.
    pub fn set_header_checksum(&mut self, v: u16) {
        write_u16(self.bm(), field::CHECKSUM, v);
    }

    /// Sets the sender.
    pub fn set_src_addr(&mut self, a: Ipv4Addr) {
        self.bm()[field::SRC_ADDR].copy_from_slice(&a.octets());
    }

    /// Sets the destination.
    pub fn set_dst_addr(&mut self, a: Ipv4Addr) {
        self.bm()[field::DST_ADDR].copy_from_slice(&a.octets());
    }

    /// Recomputes the header checksum after fields changed.
    pub fn fill_checksum(&mut self) {
        self.set_header_checksum(0);
        let c = checksum(&self.b()[..self.header_len()]);
        self.set_header_checksum(c);
    }

    /// The bytes after the header, up to `total_len`, for writing in place.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (hl, tl) = (self.header_len(), usize::from(self.total_len()));
        &mut self.bm()[hl..tl]
    }
}

/// Owned form of the IPv4 fields intpath sets (no options, DF set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// The sender.
    pub src: Ipv4Addr,
    /// The destination.
    pub dst: Ipv4Addr,
    /// What the payload is.
    pub protocol: u8,
    /// Hops left.
    pub ttl: u8,
    /// Bytes after the header, which sets `total_len` on emit.
    pub payload_len: usize,
}

impl Ipv4Repr {
    /// Copies the fields out; a wrong header checksum is `Malformed`, since
    /// the fields of a damaged header mean nothing.
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

    /// Bytes [`Self::emit`] writes, to size the buffer before emitting.
    pub const fn buffer_len(&self) -> usize {
        IPV4_HEADER_LEN
    }

    /// Writes the header with its checksum. `Oversized` when the buffer is
    /// shorter than the header or the total length exceeds 16 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv4Packet<T>) -> Result<()> {
        let total = u16::try_from(IPV4_HEADER_LEN + self.payload_len)
            .map_err(|_| Error::Oversized("IPv4 total length"))?;
        if p.b().len() < IPV4_HEADER_LEN {
            return Err(Error::Oversized("IPv4 header for its buffer"));
        }
        p.set_version_header_len(4, IPV4_HEADER_LEN);
        p.set_dscp_ecn(0);
        p.set_total_len(total);
        p.set_ident(0);
        p.set_flags_frag(DONT_FRAGMENT);
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src_addr(self.src);
        p.set_dst_addr(self.dst);
        p.fill_checksum();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 1, 1),
            dst: Ipv4Addr::new(10, 0, 2, 2),
            protocol: IP_PROTO_UDP,
            ttl: 64,
            payload_len: 8,
        }
    }

    /// Worked by hand: the one's-complement sum of the header words
    /// 4500 001c 0000 4000 4011 0a00 0101 0a00 0202 is 0xdc30, checksum 0x23cf.
    const GOLDEN: [u8; 20] = [
        0x45, 0x00, 0x00, 0x1c, // version 4, IHL 5, total length 28
        0x00, 0x00, 0x40, 0x00, // ident 0, DF
        0x40, 0x11, 0x23, 0xcf, // TTL 64, UDP, checksum
        10, 0, 1, 1, // source
        10, 0, 2, 2, // destination
    ];

    #[test]
    fn golden_bytes() {
        let mut buf = [0xaau8; 28];
        repr()
            .emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]))
            .unwrap();
        assert_eq!(buf[..20], GOLDEN);
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert_eq!((p.ident(), p.flags_frag(), p.dscp_ecn()), (0, 0x4000, 0));
        assert!(!p.is_fragment(), "DF alone is a whole datagram");
        for (flags_frag, fragment) in [
            (0x2000, true),
            (0x0001, true),
            (0x1fff, true),
            (0x8000, false),
        ] {
            let mut b = buf;
            Ipv4Packet::new_unchecked(&mut b[..]).set_flags_frag(flags_frag);
            assert_eq!(
                Ipv4Packet::new_unchecked(&b[..]).is_fragment(),
                fragment,
                "{flags_frag:#x}"
            );
        }
        assert_eq!(p.header_checksum(), 0x23cf);
    }

    #[test]
    fn emit_then_parse_with_valid_checksum() {
        let mut buf = [0u8; 28];
        repr()
            .emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]))
            .unwrap();
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(Ipv4Repr::parse(&p).unwrap(), repr());
        let mut p = Ipv4Packet::new_checked(&mut buf[..]).unwrap();
        p.decrement_ttl();
        assert_eq!(p.ttl(), 63);
        assert!(!p.verify_checksum());
        assert_eq!(Ipv4Repr::parse(&p), Err(Error::Malformed("IPv4 checksum")));
        p.fill_checksum();
        assert!(p.verify_checksum());
    }

    #[test]
    fn total_length_beyond_buffer_is_truncated() {
        let repr = Ipv4Repr {
            payload_len: 100,
            ..repr()
        };
        let mut buf = [0u8; 40];
        repr.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]))
            .unwrap();
        assert_eq!(
            Ipv4Packet::new_checked(&buf[..]).unwrap_err(),
            Error::Truncated("IPv4 packet")
        );
        assert!(Ipv4Packet::new_header_checked(&buf[..]).is_ok());
    }

    #[test]
    fn what_cannot_fit_is_oversized() {
        let mut buf = [0u8; 40];
        let big = Ipv4Repr {
            payload_len: 65_516,
            ..repr()
        };
        assert_eq!(
            big.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..])),
            Err(Error::Oversized("IPv4 total length"))
        );
        assert_eq!(
            repr().emit(&mut Ipv4Packet::new_unchecked(&mut buf[..19])),
            Err(Error::Oversized("IPv4 header for its buffer"))
        );
    }
}
