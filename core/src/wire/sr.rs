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

use super::{read_u16, write_u16, Error, Field, Result, MAX_HOPS};

mod field {
    use crate::wire::Field;
    pub const PATH_ID: Field = 0..2;
    pub const NUM_LABELS: usize = 2;
    pub const FLAGS: usize = 3;
    pub const LABELS: usize = 4;
    pub const LABEL_LEN: usize = 2;
}

/// Bytes of the SR header before its labels.
pub const SR_HEADER_LEN: usize = field::LABELS;
/// Bytes of one label (an egress port).
pub const SR_LABEL_LEN: usize = field::LABEL_LEN;

/// Set by the sink: the route is finished and the probe travels to the
/// collector by plain IPv4 forwarding, collecting no more records.
pub const SR_FLAG_DONE: u8 = 0x01;

fn label_field(i: usize) -> Field {
    let at = field::LABELS + i * field::LABEL_LEN;
    at..at + field::LABEL_LEN
}

/// Zero-copy view of the SR header and its label stack.
#[derive(Debug, Clone)]
pub struct SrHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SrHeader<T> {
    /// Wraps `buffer` without a length check, for bytes already checked or
    /// built to size: the accessors panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Checks the label count against the stack capacity (`Oversized`) and
    /// that the buffer holds every label.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let h = Self::new_unchecked(buffer);
        if h.buffer.as_ref().len() < SR_HEADER_LEN {
            return Err(Error::Truncated("SR header"));
        }
        if usize::from(h.num_labels()) > MAX_HOPS {
            return Err(Error::Oversized("SR label count"));
        }
        if h.buffer.as_ref().len() < h.header_len() {
            return Err(Error::Truncated("SR label stack"));
        }
        Ok(h)
    }

    /// Gives the buffer back, to reach the bytes after this header.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Which planned path the probe follows (the same id as its payload's).
    pub fn path_id(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::PATH_ID)
    }

    /// Labels left: egress ports the probe has still to take.
    pub fn num_labels(&self) -> u8 {
        self.buffer.as_ref()[field::NUM_LABELS]
    }

    /// Flag bits ([`SR_FLAG_DONE`]).
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// Whether the route is finished: the probe then goes to the collector by
    /// plain IPv4 forwarding and no switch pushes a record.
    pub fn is_done(&self) -> bool {
        self.flags() & SR_FLAG_DONE != 0
    }

    /// Label `i` (0 = the next egress port to take).
    pub fn label(&self, i: usize) -> u16 {
        read_u16(self.buffer.as_ref(), label_field(i))
    }

    /// Header plus label stack.
    pub fn header_len(&self) -> usize {
        SR_HEADER_LEN + usize::from(self.num_labels()) * SR_LABEL_LEN
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SrHeader<T> {
    /// Sets the path id.
    pub fn set_path_id(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::PATH_ID, v);
    }

    /// Sets the label count.
    pub fn set_num_labels(&mut self, v: u8) {
        self.buffer.as_mut()[field::NUM_LABELS] = v;
    }

    /// Sets the flags.
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }

    /// Sets the DONE flag, keeping the others.
    pub fn set_done(&mut self) {
        let flags = self.flags();
        self.set_flags(flags | SR_FLAG_DONE);
    }

    /// Sets label `i` to an egress port.
    pub fn set_label(&mut self, i: usize, port: u16) {
        write_u16(self.buffer.as_mut(), label_field(i), port);
    }
}

/// Owned form of the SR header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SrRepr {
    /// Which planned path the probe follows.
    pub path_id: u16,
    /// Flag bits ([`SR_FLAG_DONE`]).
    pub flags: u8,
    /// Egress ports, next hop first.
    pub labels: Vec<u16>,
}

impl SrRepr {
    /// Copies the fields out, for code that compares or edits headers rather
    /// than bytes.
    pub fn parse<T: AsRef<[u8]>>(h: &SrHeader<T>) -> Result<Self> {
        Ok(Self {
            path_id: h.path_id(),
            flags: h.flags(),
            labels: (0..usize::from(h.num_labels()))
                .map(|i| h.label(i))
                .collect(),
        })
    }

    /// Bytes [`Self::emit`] writes, to size the buffer before emitting.
    pub fn buffer_len(&self) -> usize {
        SR_HEADER_LEN + self.labels.len() * SR_LABEL_LEN
    }

    /// Writes header and labels. `Oversized` when there are more labels than
    /// the stack holds or the buffer is shorter than [`Self::buffer_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut SrHeader<T>) -> Result<()> {
        if self.labels.len() > MAX_HOPS {
            return Err(Error::Oversized("SR label count"));
        }
        if h.buffer.as_ref().len() < self.buffer_len() {
            return Err(Error::Oversized("SR label stack for its buffer"));
        }
        h.set_path_id(self.path_id);
        h.set_num_labels(self.labels.len() as u8);
        h.set_flags(self.flags);
        for (i, l) in self.labels.iter().enumerate() {
            h.set_label(i, *l);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_bytes_and_bounds() {
        let repr = SrRepr {
            path_id: 0x0107,
            flags: SR_FLAG_DONE,
            labels: vec![3, 1, 0x1ff],
        };
        let mut buf = vec![0xaau8; repr.buffer_len()];
        repr.emit(&mut SrHeader::new_unchecked(&mut buf[..]))
            .unwrap();
        assert_eq!(buf, [0x01, 0x07, 3, 0x01, 0, 3, 0, 1, 0x01, 0xff]);
        let h = SrHeader::new_checked(&buf[..]).unwrap();
        assert!(h.is_done());
        assert_eq!(SrRepr::parse(&h).unwrap(), repr);
        assert_eq!(
            SrHeader::new_checked(&buf[..9]).unwrap_err(),
            Error::Truncated("SR label stack")
        );
        buf[2] = (MAX_HOPS + 1) as u8;
        assert_eq!(
            SrHeader::new_checked(&buf[..]).unwrap_err(),
            Error::Oversized("SR label count")
        );
    }

    #[test]
    fn what_cannot_fit_is_oversized() {
        let too_many = SrRepr {
            labels: vec![1; MAX_HOPS + 1],
            ..SrRepr::default()
        };
        let mut buf = vec![0u8; too_many.buffer_len()];
        assert_eq!(
            too_many.emit(&mut SrHeader::new_unchecked(&mut buf[..])),
            Err(Error::Oversized("SR label count"))
        );
        let two = SrRepr {
            labels: vec![1, 2],
            ..SrRepr::default()
        };
        assert_eq!(
            two.emit(&mut SrHeader::new_unchecked(&mut [0u8; 7][..])),
            Err(Error::Oversized("SR label stack for its buffer"))
        );
    }
}
