//! UDP header. Probes carry a zero checksum (allowed over IPv4) because every
//! switch rewrites the payload and recomputing it would cost each hop.

use super::{be16, put16, Error, Result};

pub const UDP_HEADER_LEN: usize = 8;

/// Zero-copy view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Checks the header and that the buffer holds the announced length.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        let len = p.buffer.as_ref().len();
        if len < UDP_HEADER_LEN {
            return Err(Error::Truncated("UDP header"));
        }
        let announced = usize::from(p.len());
        if announced < UDP_HEADER_LEN {
            return Err(Error::Malformed("UDP length"));
        }
        if len < announced {
            return Err(Error::Truncated("UDP datagram"));
        }
        Ok(p)
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), 0)
    }

    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }

    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), 4)
    }

    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) == UDP_HEADER_LEN
    }

    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[UDP_HEADER_LEN..usize::from(self.len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    pub fn set_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), 4, v);
    }

    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), 6, v);
    }
}

/// Owned form of a UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub payload_len: usize,
}

impl UdpRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &UdpPacket<T>) -> Result<Self> {
        Ok(Self {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            payload_len: usize::from(p.len()) - UDP_HEADER_LEN,
        })
    }

    pub const fn buffer_len(&self) -> usize {
        UDP_HEADER_LEN
    }

    /// Writes the header with a zero checksum.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<()> {
        let len = u16::try_from(UDP_HEADER_LEN + self.payload_len)
            .map_err(|_| Error::Malformed("UDP length"))?;
        put16(buffer, 0, self.src_port);
        put16(buffer, 2, self.dst_port);
        put16(buffer, 4, len);
        put16(buffer, 6, 0);
        Ok(())
    }
}
