//! Ethernet II header.

use super::{read_u16, write_u16, Error, Result};
use std::fmt;
use std::str::FromStr;

mod field {
    use crate::wire::Field;
    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: usize = 14;
}

/// Bytes of the Ethernet header, the offset of its payload.
pub const ETHERNET_HEADER_LEN: usize = field::PAYLOAD;

/// A 48-bit MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// All ones: the generator's default destination, since switches do not
    /// check a probe's.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

    /// The address as the 48-bit integer P4Runtime and P4 programs use.
    pub fn to_u64(self) -> u64 {
        self.0.iter().fold(0, |acc, b| (acc << 8) | u64::from(*b))
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl FromStr for MacAddr {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for byte in &mut out {
            let part = parts.next().ok_or(Error::Malformed("MAC address"))?;
            *byte = u8::from_str_radix(part, 16).map_err(|_| Error::Malformed("MAC address"))?;
        }
        if parts.next().is_some() {
            return Err(Error::Malformed("MAC address"));
        }
        Ok(MacAddr(out))
    }
}

/// The EtherTypes intpath handles; anything else passes through as `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EtherType {
    /// IPv4 (0x0800): probes and ordinary traffic.
    Ipv4,
    /// ARP (0x0806): hosts resolving each other, passed through.
    Arp,
    /// Any other EtherType, kept so that the frame passes through unchanged.
    Unknown(u16),
}

impl From<u16> for EtherType {
    fn from(v: u16) -> Self {
        match v {
            0x0800 => EtherType::Ipv4,
            0x0806 => EtherType::Arp,
            other => EtherType::Unknown(other),
        }
    }
}

impl From<EtherType> for u16 {
    fn from(t: EtherType) -> u16 {
        match t {
            EtherType::Ipv4 => 0x0800,
            EtherType::Arp => 0x0806,
            EtherType::Unknown(v) => v,
        }
    }
}

/// Zero-copy view of an Ethernet frame.
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wraps `buffer` without a length check, for bytes already checked or
    /// built to size: the accessors panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Wraps `buffer` once its length is checked, so that the accessors can
    /// index without further checks.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let frame = Self::new_unchecked(buffer);
        if frame.buffer.as_ref().len() < ETHERNET_HEADER_LEN {
            return Err(Error::Truncated("Ethernet header"));
        }
        Ok(frame)
    }

    /// Gives the buffer back, to reach the bytes after this header.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination MAC: a switch rewrites it per hop (`ipv4_forward`).
    pub fn dst_addr(&self) -> MacAddr {
        MacAddr(
            self.buffer.as_ref()[field::DESTINATION]
                .try_into()
                .expect("6 bytes"),
        )
    }

    /// Source MAC.
    pub fn src_addr(&self) -> MacAddr {
        MacAddr(
            self.buffer.as_ref()[field::SOURCE]
                .try_into()
                .expect("6 bytes"),
        )
    }

    /// What the payload is; a switch parses on only for IPv4.
    pub fn ethertype(&self) -> EtherType {
        read_u16(self.buffer.as_ref(), field::ETHERTYPE).into()
    }

    /// The bytes after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Sets the destination MAC.
    pub fn set_dst_addr(&mut self, addr: MacAddr) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&addr.0);
    }

    /// Sets the source MAC.
    pub fn set_src_addr(&mut self, addr: MacAddr) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&addr.0);
    }

    /// Sets the EtherType.
    pub fn set_ethertype(&mut self, t: EtherType) {
        write_u16(self.buffer.as_mut(), field::ETHERTYPE, t.into());
    }

    /// The bytes after the header, for writing the next header in place.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD..]
    }
}

/// Owned form of an Ethernet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    /// Source MAC.
    pub src: MacAddr,
    /// Destination MAC.
    pub dst: MacAddr,
    /// What the payload is.
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// Copies the fields out, for code that compares or edits headers rather
    /// than bytes.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Result<Self> {
        Ok(Self {
            src: frame.src_addr(),
            dst: frame.dst_addr(),
            ethertype: frame.ethertype(),
        })
    }

    /// Bytes [`Self::emit`] writes, to size the buffer before emitting.
    pub const fn buffer_len(&self) -> usize {
        ETHERNET_HEADER_LEN
    }

    /// Writes every field; the view must hold [`ETHERNET_HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut EthernetFrame<T>) {
        frame.set_src_addr(self.src);
        frame.set_dst_addr(self.dst);
        frame.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_roundtrip_and_errors() {
        let mac: MacAddr = "00:00:0a:00:01:01".parse().unwrap();
        assert_eq!(mac.to_string(), "00:00:0a:00:01:01");
        assert_eq!(mac.to_u64(), 0x0a00_0101);
        assert!("00:00:0a:00:01".parse::<MacAddr>().is_err());
        assert!("00:00:0a:00:01:01:02".parse::<MacAddr>().is_err());
        assert!("zz:00:0a:00:01:01".parse::<MacAddr>().is_err());
    }

    #[test]
    fn golden_bytes() {
        let bytes = [
            0x00, 0x00, 0x0a, 0x00, 0x02, 0x02, // destination
            0x00, 0x00, 0x0a, 0x00, 0x01, 0x01, // source
            0x08, 0x06, // ARP
        ];
        let repr = EthernetRepr {
            dst: MacAddr([0, 0, 0x0a, 0, 2, 2]),
            src: MacAddr([0, 0, 0x0a, 0, 1, 1]),
            ethertype: EtherType::Arp,
        };
        let mut buf = [0xaau8; ETHERNET_HEADER_LEN];
        repr.emit(&mut EthernetFrame::new_checked(&mut buf[..]).unwrap());
        assert_eq!(buf, bytes);
        let frame = EthernetFrame::new_checked(&bytes[..]).unwrap();
        assert_eq!(EthernetRepr::parse(&frame).unwrap(), repr);
        assert!(frame.payload().is_empty());
    }

    #[test]
    fn short_frame_is_rejected() {
        assert_eq!(
            EthernetFrame::new_checked(&[0u8; 13][..]).unwrap_err(),
            Error::Truncated("Ethernet header")
        );
    }
}
