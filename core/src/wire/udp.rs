//! UDP header. Probes carry a zero checksum (allowed over IPv4) because every
//! switch rewrites the payload and recomputing it would cost each hop.

use super::{read_u16, write_u16, Error, Result};

mod field {
    use crate::wire::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
}

/// Bytes of the UDP header, the offset of its payload.
pub const UDP_HEADER_LEN: usize = field::CHECKSUM.end;

/// Zero-copy view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Wraps `buffer` without a length check, for bytes already checked or
    /// built to size: the accessors panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Checks the header and that the buffer holds the announced length.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_header_checked(buffer)?;
        let announced = usize::from(p.len());
        if announced < UDP_HEADER_LEN {
            return Err(Error::Malformed("UDP length"));
        }
        if p.buffer.as_ref().len() < announced {
            return Err(Error::Truncated("UDP datagram"));
        }
        Ok(p)
    }

    /// Checks only that the 8-byte header is there (a P4 parser's view).
    pub fn new_header_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        if p.buffer.as_ref().len() < UDP_HEADER_LEN {
            return Err(Error::Truncated("UDP header"));
        }
        Ok(p)
    }

    /// Gives the buffer back, to reach the bytes after this header.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The source port.
    pub fn src_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::SRC_PORT)
    }

    /// The destination port: [`super::SRINT_UDP_PORT`] marks a probe.
    pub fn dst_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::DST_PORT)
    }

    /// Bytes of header and payload as announced.
    pub fn len(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Whether the datagram carries no payload.
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) == UDP_HEADER_LEN
    }

    /// The checksum as carried (zero on probes, see the module doc).
    pub fn checksum(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// The bytes after the header, up to the announced length.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[UDP_HEADER_LEN..usize::from(self.len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::SRC_PORT, v);
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::DST_PORT, v);
    }

    /// Sets the length (header and payload).
    pub fn set_len(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::LENGTH, v);
    }

    /// Sets the checksum as given (probes carry zero).
    pub fn set_checksum(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::CHECKSUM, v);
    }
}

/// Owned form of a UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRepr {
    /// The source port.
    pub src_port: u16,
    /// The destination port.
    pub dst_port: u16,
    /// Bytes after the header, which sets the length on emit.
    pub payload_len: usize,
}

impl UdpRepr {
    /// Copies the fields out, for code that compares or edits headers rather
    /// than bytes.
    pub fn parse<T: AsRef<[u8]>>(p: &UdpPacket<T>) -> Result<Self> {
        Ok(Self {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            payload_len: usize::from(p.len()) - UDP_HEADER_LEN,
        })
    }

    /// Bytes [`Self::emit`] writes, to size the buffer before emitting.
    pub const fn buffer_len(&self) -> usize {
        UDP_HEADER_LEN
    }

    /// Writes the header with a zero checksum. `Oversized` when the buffer is
    /// shorter than the header or the length exceeds 16 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut UdpPacket<T>) -> Result<()> {
        let len = u16::try_from(UDP_HEADER_LEN + self.payload_len)
            .map_err(|_| Error::Oversized("UDP length"))?;
        if p.buffer.as_ref().len() < UDP_HEADER_LEN {
            return Err(Error::Oversized("UDP header for its buffer"));
        }
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_len(len);
        p.set_checksum(0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_bytes() {
        let repr = UdpRepr {
            src_port: 40000,
            dst_port: 9555,
            payload_len: 4,
        };
        let mut buf = [0xaau8; 12];
        repr.emit(&mut UdpPacket::new_unchecked(&mut buf[..]))
            .unwrap();
        assert_eq!(
            buf,
            [0x9c, 0x40, 0x25, 0x53, 0x00, 0x0c, 0x00, 0x00, 0xaa, 0xaa, 0xaa, 0xaa]
        );
        let p = UdpPacket::new_checked(&buf[..]).unwrap();
        assert_eq!(UdpRepr::parse(&p).unwrap(), repr);
        assert_eq!(p.payload(), [0xaa; 4]);
    }

    #[test]
    fn lengths_are_checked() {
        let bytes = [0, 1, 0, 2, 0, 7, 0, 0];
        assert_eq!(
            UdpPacket::new_checked(&bytes[..]).unwrap_err(),
            Error::Malformed("UDP length")
        );
        let bytes = [0, 1, 0, 2, 0, 9, 0, 0];
        assert_eq!(
            UdpPacket::new_checked(&bytes[..]).unwrap_err(),
            Error::Truncated("UDP datagram")
        );
        assert!(UdpPacket::new_header_checked(&bytes[..]).is_ok());
        let big = UdpRepr {
            src_port: 1,
            dst_port: 2,
            payload_len: 65_528,
        };
        assert_eq!(
            big.emit(&mut UdpPacket::new_unchecked(&mut [0u8; 8][..])),
            Err(Error::Oversized("UDP length"))
        );
    }
}
