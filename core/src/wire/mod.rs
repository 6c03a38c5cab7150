//! The SR-INT wire format, one zero-copy view and one `Repr` per header.
//!
//! A probe on the wire is
//! `Ethernet / IPv4 (dst = collector) / UDP (dst = SRINT_UDP_PORT) / SR / INT / payload`.
//! Byte diagrams live in `p4/README.md`; `p4/sr_int.p4` declares the same
//! headers, and the lock-step tests compare the two.
//!
//! Views follow smoltcp: `Packet::new_checked` validates the length once, after
//! which the accessors index the buffer directly. Each module names its byte
//! ranges once, in a private `field` module; getters and setters use them, and
//! every `Repr::emit` writes through the setters. This is the only code in
//! the workspace that knows an offset inside a header.

mod cpu;
mod ethernet;
mod int;
mod ipv4;
mod probe;
mod sr;
mod udp;

pub use cpu::{PacketIn, PacketInRepr, PacketOut, PacketOutRepr, CPU_HEADER_LEN};
pub use ethernet::{EtherType, EthernetFrame, EthernetRepr, MacAddr, ETHERNET_HEADER_LEN};
pub use int::{
    IntHeader, IntRecord, IntRecordRepr, IntRepr, INT_HEADER_LEN, INT_RECORD_LEN, INT_RECORD_WORDS,
};
pub use ipv4::{checksum, Ipv4Packet, Ipv4Repr, IPV4_HEADER_LEN, IP_PROTO_UDP};
pub use probe::{PayloadRepr, ProbePayload, ProbeRepr, PROBE_PAYLOAD_LEN};
pub use sr::{SrHeader, SrRepr, SR_FLAG_DONE, SR_HEADER_LEN, SR_LABEL_LEN};
pub use udp::{UdpPacket, UdpRepr, UDP_HEADER_LEN};

/// UDP destination port that marks a datagram as an SR-INT probe.
pub const SRINT_UDP_PORT: u16 = 9555;

/// Default link MTU (bytes of IPv4 packet) the hop limit is derived from.
pub const DEFAULT_MTU: usize = 1500;

/// Capacity of the label and record stacks in `sr_int.p4` (its `MAX_HOPS`).
///
/// This is [`max_hops`] for the default MTU; the P4 program needs a constant.
pub const MAX_HOPS: usize = 45;

/// Why a buffer is not a valid header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The buffer ends before the header (or the length it announces) does.
    #[error("truncated {0}")]
    Truncated(&'static str),
    /// A field holds a value the format does not allow.
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// A count is over the stack capacity ([`MAX_HOPS`]), a length over its
    /// field, or a representation does not fit the buffer it is emitted into.
    #[error("oversized {0}")]
    Oversized(&'static str),
}

/// What every view and `Repr` returns: a packet that does not parse is
/// an [`Error`], never a panic.
pub type Result<T> = core::result::Result<T, Error>;

/// Bytes of a probe before any label or record: IPv4, UDP, SR, INT and payload.
pub const PROBE_FIXED_LEN: usize =
    IPV4_HEADER_LEN + UDP_HEADER_LEN + SR_HEADER_LEN + INT_HEADER_LEN + PROBE_PAYLOAD_LEN;

/// Most switches one probe can visit with an IPv4 MTU of `mtu` bytes.
///
/// Every switch on a path pushes one record, and the stack of remaining labels
/// is never larger than the records that replace it (a label is smaller than a
/// record), so the probe is largest at the sink: fixed part plus one record per
/// switch. A path of `n` switches has `n - 1` links.
pub const fn max_hops(mtu: usize) -> usize {
    if mtu <= PROBE_FIXED_LEN {
        return 0;
    }
    (mtu - PROBE_FIXED_LEN) / INT_RECORD_LEN
}

/// Most links one probe path may have at IPv4 MTU `mtu` (see [`max_hops`]).
pub const fn max_path_links(mtu: usize) -> usize {
    max_hops(mtu).saturating_sub(1)
}

/// A byte range of a header, named once in each module's `field`.
pub(crate) type Field = core::ops::Range<usize>;

#[inline]
pub(crate) fn read_u16(b: &[u8], f: Field) -> u16 {
    u16::from_be_bytes(b[f].try_into().expect("2-byte field"))
}
#[inline]
pub(crate) fn read_u32(b: &[u8], f: Field) -> u32 {
    u32::from_be_bytes(b[f].try_into().expect("4-byte field"))
}
#[inline]
pub(crate) fn read_u64(b: &[u8], f: Field) -> u64 {
    u64::from_be_bytes(b[f].try_into().expect("8-byte field"))
}
#[inline]
pub(crate) fn write_u16(b: &mut [u8], f: Field, v: u16) {
    b[f].copy_from_slice(&v.to_be_bytes());
}
#[inline]
pub(crate) fn write_u32(b: &mut [u8], f: Field, v: u32) {
    b[f].copy_from_slice(&v.to_be_bytes());
}
#[inline]
pub(crate) fn write_u64(b: &mut [u8], f: Field, v: u64) {
    b[f].copy_from_slice(&v.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_limit_for_default_mtu_matches_p4_stack_size() {
        assert_eq!(max_hops(DEFAULT_MTU), MAX_HOPS);
        assert_eq!(max_path_links(DEFAULT_MTU), MAX_HOPS - 1);
        // A full probe fits the MTU, one more record would not.
        const {
            assert!(PROBE_FIXED_LEN + MAX_HOPS * INT_RECORD_LEN <= DEFAULT_MTU);
            assert!(PROBE_FIXED_LEN + (MAX_HOPS + 1) * INT_RECORD_LEN > DEFAULT_MTU);
        }
        assert_eq!(max_hops(10), 0);
    }
}
