//! The source-routing header: which probe path this is and the egress ports
//! still to take, popped front first, one per switch.
//!
//! ```text
//!  0               1               2               3
//! +---------------+---------------+---------------+---------------+
//! |            path_id            |  num_labels   |     flags     |
//! +---------------+---------------+---------------+---------------+
//! |        label 0 (egress port)  |        label 1 ...            |
//! ```

use super::{be16, put16, Error, Result, MAX_HOPS};

pub const SR_HEADER_LEN: usize = 4;
pub const SR_LABEL_LEN: usize = 2;

/// Set by the sink: the route is finished and the probe travels to the
/// collector by plain IPv4 forwarding, collecting no more records.
pub const SR_FLAG_DONE: u8 = 0x01;

/// Zero-copy view of the SR header and its label stack.
#[derive(Debug, Clone)]
pub struct SrHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SrHeader<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Checks the label count against the stack capacity and the buffer.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let h = Self::new_unchecked(buffer);
        if h.buffer.as_ref().len() < SR_HEADER_LEN {
            return Err(Error::Truncated("SR header"));
        }
        if usize::from(h.num_labels()) > MAX_HOPS {
            return Err(Error::Malformed("SR label count"));
        }
        if h.buffer.as_ref().len() < h.header_len() {
            return Err(Error::Truncated("SR label stack"));
        }
        Ok(h)
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn path_id(&self) -> u16 {
        be16(self.buffer.as_ref(), 0)
    }

    pub fn num_labels(&self) -> u8 {
        self.buffer.as_ref()[2]
    }

    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[3]
    }

    pub fn is_done(&self) -> bool {
        self.flags() & SR_FLAG_DONE != 0
    }

    /// Label `i` (0 = the next egress port to take).
    pub fn label(&self, i: usize) -> u16 {
        be16(self.buffer.as_ref(), SR_HEADER_LEN + i * SR_LABEL_LEN)
    }

    /// Header plus label stack.
    pub fn header_len(&self) -> usize {
        SR_HEADER_LEN + usize::from(self.num_labels()) * SR_LABEL_LEN
    }
}

/// Owned form of the SR header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SrRepr {
    pub path_id: u16,
    pub flags: u8,
    /// Egress ports, next hop first.
    pub labels: Vec<u16>,
}

impl SrRepr {
    pub fn parse<T: AsRef<[u8]>>(h: &SrHeader<T>) -> Result<Self> {
        Ok(Self {
            path_id: h.path_id(),
            flags: h.flags(),
            labels: (0..usize::from(h.num_labels()))
                .map(|i| h.label(i))
                .collect(),
        })
    }

    pub fn buffer_len(&self) -> usize {
        SR_HEADER_LEN + self.labels.len() * SR_LABEL_LEN
    }

    /// Writes header and labels; `buffer` must hold [`Self::buffer_len`] bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<()> {
        if self.labels.len() > MAX_HOPS {
            return Err(Error::Malformed("SR label count"));
        }
        put16(buffer, 0, self.path_id);
        buffer[2] = self.labels.len() as u8;
        buffer[3] = self.flags;
        for (i, l) in self.labels.iter().enumerate() {
            put16(buffer, SR_HEADER_LEN + i * SR_LABEL_LEN, *l);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_bounds() {
        let repr = SrRepr {
            path_id: 7,
            flags: 0,
            labels: vec![3, 1, 64],
        };
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut buf).unwrap();
        assert_eq!(buf, [0, 7, 3, 0, 0, 3, 0, 1, 0, 64]);
        let h = SrHeader::new_checked(&buf[..]).unwrap();
        assert_eq!(SrRepr::parse(&h).unwrap(), repr);
        assert_eq!(
            SrHeader::new_checked(&buf[..9]).unwrap_err(),
            Error::Truncated("SR label stack")
        );
        buf[2] = (MAX_HOPS + 1) as u8;
        assert_eq!(
            SrHeader::new_checked(&buf[..]).unwrap_err(),
            Error::Malformed("SR label count")
        );
    }
}
