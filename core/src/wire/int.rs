//! The INT header and the per-hop records each switch pushes at egress,
//! newest first.
//!
//! ```text
//!  0               1               2               3
//! +---------------+---------------+---------------+---------------+
//! |   hop_count   | remaining_hops| record_words  |   reserved    |
//! +---------------+---------------+---------------+---------------+
//! record (32 bytes, record_words = 8):
//! |                           switch_id                           |
//! |         ingress_port          |          egress_port          |
//! |                 ingress_ts (µs, 64 bits)                      |
//! |                 egress_ts  (µs, 64 bits)                      |
//! |                 enq_qdepth (packets)                          |
//! |                 deq_timedelta (µs)                            |
//! ```
//!
//! Timestamps and delays are in microseconds because that is what bmv2's
//! `standard_metadata` gives; the reference switch uses the same unit.

use super::{be16, be32, be64, put16, put32, put64, Error, Result, MAX_HOPS};

pub const INT_HEADER_LEN: usize = 4;
pub const INT_RECORD_LEN: usize = 32;
/// Record size in 4-byte words, as carried in the header.
pub const INT_RECORD_WORDS: u8 = (INT_RECORD_LEN / 4) as u8;

/// Zero-copy view of the INT header and its records.
#[derive(Debug, Clone)]
pub struct IntHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IntHeader<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Checks record size, hop count and that every record is present.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let h = Self::new_unchecked(buffer);
        if h.buffer.as_ref().len() < INT_HEADER_LEN {
            return Err(Error::Truncated("INT header"));
        }
        if h.record_words() != INT_RECORD_WORDS {
            return Err(Error::Malformed("INT record size"));
        }
        if usize::from(h.hop_count()) > MAX_HOPS {
            return Err(Error::Malformed("INT hop count"));
        }
        if h.buffer.as_ref().len() < h.header_len() {
            return Err(Error::Truncated("INT records"));
        }
        Ok(h)
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn hop_count(&self) -> u8 {
        self.buffer.as_ref()[0]
    }

    pub fn remaining_hops(&self) -> u8 {
        self.buffer.as_ref()[1]
    }

    pub fn record_words(&self) -> u8 {
        self.buffer.as_ref()[2]
    }

    /// Header plus records.
    pub fn header_len(&self) -> usize {
        INT_HEADER_LEN + usize::from(self.hop_count()) * INT_RECORD_LEN
    }

    /// Record `i`, 0 being the newest (the last switch visited).
    pub fn record(&self, i: usize) -> IntRecord<&[u8]> {
        let at = INT_HEADER_LEN + i * INT_RECORD_LEN;
        IntRecord::new_unchecked(&self.buffer.as_ref()[at..at + INT_RECORD_LEN])
    }

    pub fn records(&self) -> impl Iterator<Item = IntRecord<&[u8]>> + '_ {
        (0..usize::from(self.hop_count())).map(|i| self.record(i))
    }
}

/// Zero-copy view of one INT record.
#[derive(Debug, Clone)]
pub struct IntRecord<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IntRecord<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < INT_RECORD_LEN {
            return Err(Error::Truncated("INT record"));
        }
        Ok(Self { buffer })
    }

    pub fn switch_id(&self) -> u32 {
        be32(self.buffer.as_ref(), 0)
    }
    pub fn ingress_port(&self) -> u16 {
        be16(self.buffer.as_ref(), 4)
    }
    pub fn egress_port(&self) -> u16 {
        be16(self.buffer.as_ref(), 6)
    }
    pub fn ingress_ts(&self) -> u64 {
        be64(self.buffer.as_ref(), 8)
    }
    pub fn egress_ts(&self) -> u64 {
        be64(self.buffer.as_ref(), 16)
    }
    pub fn enq_qdepth(&self) -> u32 {
        be32(self.buffer.as_ref(), 24)
    }
    pub fn deq_timedelta(&self) -> u32 {
        be32(self.buffer.as_ref(), 28)
    }
}

/// Owned form of one INT record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IntRecordRepr {
    pub switch_id: u32,
    pub ingress_port: u16,
    pub egress_port: u16,
    /// Microseconds, switch clock.
    pub ingress_ts: u64,
    /// Microseconds, switch clock.
    pub egress_ts: u64,
    /// Packets in the egress queue when this probe was enqueued.
    pub enq_qdepth: u32,
    /// Microseconds this probe waited in the egress queue.
    pub deq_timedelta: u32,
}

impl IntRecordRepr {
    pub fn parse<T: AsRef<[u8]>>(r: &IntRecord<T>) -> Self {
        Self {
            switch_id: r.switch_id(),
            ingress_port: r.ingress_port(),
            egress_port: r.egress_port(),
            ingress_ts: r.ingress_ts(),
            egress_ts: r.egress_ts(),
            enq_qdepth: r.enq_qdepth(),
            deq_timedelta: r.deq_timedelta(),
        }
    }

    /// Writes the record into the first [`INT_RECORD_LEN`] bytes of `buffer`.
    pub fn emit(&self, buffer: &mut [u8]) {
        put32(buffer, 0, self.switch_id);
        put16(buffer, 4, self.ingress_port);
        put16(buffer, 6, self.egress_port);
        put64(buffer, 8, self.ingress_ts);
        put64(buffer, 16, self.egress_ts);
        put32(buffer, 24, self.enq_qdepth);
        put32(buffer, 28, self.deq_timedelta);
    }
}

/// Owned form of the INT header with its records.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IntRepr {
    /// Records a switch may still push before the probe is dropped.
    pub remaining_hops: u8,
    /// Newest first.
    pub records: Vec<IntRecordRepr>,
}

impl IntRepr {
    pub fn parse<T: AsRef<[u8]>>(h: &IntHeader<T>) -> Result<Self> {
        Ok(Self {
            remaining_hops: h.remaining_hops(),
            records: h.records().map(|r| IntRecordRepr::parse(&r)).collect(),
        })
    }

    pub fn buffer_len(&self) -> usize {
        INT_HEADER_LEN + self.records.len() * INT_RECORD_LEN
    }

    pub fn emit(&self, buffer: &mut [u8]) -> Result<()> {
        if self.records.len() > MAX_HOPS {
            return Err(Error::Malformed("INT hop count"));
        }
        buffer[0] = self.records.len() as u8;
        buffer[1] = self.remaining_hops;
        buffer[2] = INT_RECORD_WORDS;
        buffer[3] = 0;
        for (i, r) in self.records.iter().enumerate() {
            r.emit(&mut buffer[INT_HEADER_LEN + i * INT_RECORD_LEN..]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_checks() {
        let rec = IntRecordRepr {
            switch_id: 0x0102_0304,
            ingress_port: 1,
            egress_port: 2,
            ingress_ts: 1_000,
            egress_ts: 1_250,
            enq_qdepth: 17,
            deq_timedelta: 240,
        };
        let repr = IntRepr {
            remaining_hops: 40,
            records: vec![rec, IntRecordRepr::default()],
        };
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut buf).unwrap();
        let h = IntHeader::new_checked(&buf[..]).unwrap();
        assert_eq!(h.record(0).switch_id(), 0x0102_0304);
        assert_eq!(IntRepr::parse(&h).unwrap(), repr);
        assert_eq!(
            IntHeader::new_checked(&buf[..buf.len() - 1]).unwrap_err(),
            Error::Truncated("INT records")
        );
        buf[2] = 7;
        assert_eq!(
            IntHeader::new_checked(&buf[..]).unwrap_err(),
            Error::Malformed("INT record size")
        );
    }
}
