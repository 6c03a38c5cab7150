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

use super::{
    read_u16, read_u32, read_u64, write_u16, write_u32, write_u64, Error, Result, MAX_HOPS,
};

mod field {
    pub const HOP_COUNT: usize = 0;
    pub const REMAINING_HOPS: usize = 1;
    pub const RECORD_WORDS: usize = 2;
    pub const RESERVED: usize = 3;
    pub const RECORDS: usize = 4;
    /// Within a record.
    pub mod record {
        use crate::wire::Field;
        pub const SWITCH_ID: Field = 0..4;
        pub const INGRESS_PORT: Field = 4..6;
        pub const EGRESS_PORT: Field = 6..8;
        pub const INGRESS_TS: Field = 8..16;
        pub const EGRESS_TS: Field = 16..24;
        pub const ENQ_QDEPTH: Field = 24..28;
        pub const DEQ_TIMEDELTA: Field = 28..32;
    }
}

/// Bytes of the INT header before its records.
pub const INT_HEADER_LEN: usize = field::RECORDS;
/// Bytes of one record, the step between records.
pub const INT_RECORD_LEN: usize = field::record::DEQ_TIMEDELTA.end;
/// Record size in 4-byte words, as carried in the header.
pub const INT_RECORD_WORDS: u8 = (INT_RECORD_LEN / 4) as u8;

/// Zero-copy view of the INT header and its records.
#[derive(Debug, Clone)]
pub struct IntHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IntHeader<T> {
    /// Wraps `buffer` without a length check, for bytes already checked or
    /// built to size: the accessors panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Checks hop count against the stack capacity (`Oversized`), the record
    /// size, and that every record is present.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let h = Self::new_unchecked(buffer);
        if h.buffer.as_ref().len() < INT_HEADER_LEN {
            return Err(Error::Truncated("INT header"));
        }
        if usize::from(h.hop_count()) > MAX_HOPS {
            return Err(Error::Oversized("INT hop count"));
        }
        if h.record_words() != INT_RECORD_WORDS {
            return Err(Error::Malformed("INT record size"));
        }
        if h.buffer.as_ref().len() < h.header_len() {
            return Err(Error::Truncated("INT records"));
        }
        Ok(h)
    }

    /// Gives the buffer back, to reach the bytes after this header.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Records the probe carries, one per switch visited so far.
    pub fn hop_count(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_COUNT]
    }

    /// Records a switch may still push; a switch drops the probe at zero
    /// (the hop limit), so the probe never outgrows its MTU.
    pub fn remaining_hops(&self) -> u8 {
        self.buffer.as_ref()[field::REMAINING_HOPS]
    }

    /// Record size in 4-byte words: a reader skips records of a size it
    /// does not know rather than misreading them.
    pub fn record_words(&self) -> u8 {
        self.buffer.as_ref()[field::RECORD_WORDS]
    }

    /// Header plus records.
    pub fn header_len(&self) -> usize {
        INT_HEADER_LEN + usize::from(self.hop_count()) * INT_RECORD_LEN
    }

    /// Record `i`, 0 being the newest (the last switch visited).
    pub fn record(&self, i: usize) -> IntRecord<&[u8]> {
        let at = field::RECORDS + i * INT_RECORD_LEN;
        IntRecord::new_unchecked(&self.buffer.as_ref()[at..at + INT_RECORD_LEN])
    }

    /// Every record, newest first.
    pub fn records(&self) -> impl Iterator<Item = IntRecord<&[u8]>> + '_ {
        (0..usize::from(self.hop_count())).map(|i| self.record(i))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IntHeader<T> {
    /// Sets the record count (a switch increments it as it pushes).
    pub fn set_hop_count(&mut self, v: u8) {
        self.buffer.as_mut()[field::HOP_COUNT] = v;
    }

    /// Sets the hop budget left.
    pub fn set_remaining_hops(&mut self, v: u8) {
        self.buffer.as_mut()[field::REMAINING_HOPS] = v;
    }

    /// Sets the record size in words ([`INT_RECORD_WORDS`] on emit).
    pub fn set_record_words(&mut self, v: u8) {
        self.buffer.as_mut()[field::RECORD_WORDS] = v;
    }

    /// Sets the reserved byte (zero on everything intpath emits).
    pub fn set_reserved(&mut self, v: u8) {
        self.buffer.as_mut()[field::RESERVED] = v;
    }

    /// Record `i` for writing.
    pub fn record_mut(&mut self, i: usize) -> IntRecord<&mut [u8]> {
        let at = field::RECORDS + i * INT_RECORD_LEN;
        IntRecord::new_unchecked(&mut self.buffer.as_mut()[at..at + INT_RECORD_LEN])
    }
}

/// Zero-copy view of one INT record.
#[derive(Debug, Clone)]
pub struct IntRecord<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IntRecord<T> {
    /// Wraps `buffer` without a length check, for bytes already checked or
    /// built to size: the accessors panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Wraps `buffer` once its length is checked, so that the accessors can
    /// index without further checks.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < INT_RECORD_LEN {
            return Err(Error::Truncated("INT record"));
        }
        Ok(Self { buffer })
    }

    /// The id of the switch that pushed the record, which ties the record
    /// to a topology node.
    pub fn switch_id(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::record::SWITCH_ID)
    }
    /// The port the probe came in on at that switch.
    pub fn ingress_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::record::INGRESS_PORT)
    }
    /// The port the probe left by: with the switch id, the link measured.
    pub fn egress_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::record::EGRESS_PORT)
    }
    /// When the probe entered the switch (µs, switch clock).
    pub fn ingress_ts(&self) -> u64 {
        read_u64(self.buffer.as_ref(), field::record::INGRESS_TS)
    }
    /// When the probe left egress (µs, switch clock).
    pub fn egress_ts(&self) -> u64 {
        read_u64(self.buffer.as_ref(), field::record::EGRESS_TS)
    }
    /// Packets queued at the egress port when the probe was enqueued.
    pub fn enq_qdepth(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::record::ENQ_QDEPTH)
    }
    /// How long the probe waited in the egress queue (µs).
    pub fn deq_timedelta(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::record::DEQ_TIMEDELTA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IntRecord<T> {
    /// Sets the switch id.
    pub fn set_switch_id(&mut self, v: u32) {
        write_u32(self.buffer.as_mut(), field::record::SWITCH_ID, v);
    }
    /// Sets the ingress port.
    pub fn set_ingress_port(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::record::INGRESS_PORT, v);
    }
    /// Sets the egress port.
    pub fn set_egress_port(&mut self, v: u16) {
        write_u16(self.buffer.as_mut(), field::record::EGRESS_PORT, v);
    }
    /// Sets the ingress timestamp (µs).
    pub fn set_ingress_ts(&mut self, v: u64) {
        write_u64(self.buffer.as_mut(), field::record::INGRESS_TS, v);
    }
    /// Sets the egress timestamp (µs).
    pub fn set_egress_ts(&mut self, v: u64) {
        write_u64(self.buffer.as_mut(), field::record::EGRESS_TS, v);
    }
    /// Sets the queue depth at enqueue (packets).
    pub fn set_enq_qdepth(&mut self, v: u32) {
        write_u32(self.buffer.as_mut(), field::record::ENQ_QDEPTH, v);
    }
    /// Sets the queueing delay (µs).
    pub fn set_deq_timedelta(&mut self, v: u32) {
        write_u32(self.buffer.as_mut(), field::record::DEQ_TIMEDELTA, v);
    }
}

/// Owned form of one INT record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IntRecordRepr {
    /// The switch that pushed the record.
    pub switch_id: u32,
    /// The port the probe came in on.
    pub ingress_port: u16,
    /// The port the probe left by.
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
    /// Copies the fields out, for code that compares or edits headers rather
    /// than bytes.
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

    /// Writes every field; the view must hold [`INT_RECORD_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, r: &mut IntRecord<T>) {
        r.set_switch_id(self.switch_id);
        r.set_ingress_port(self.ingress_port);
        r.set_egress_port(self.egress_port);
        r.set_ingress_ts(self.ingress_ts);
        r.set_egress_ts(self.egress_ts);
        r.set_enq_qdepth(self.enq_qdepth);
        r.set_deq_timedelta(self.deq_timedelta);
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
    /// Copies the fields out, for code that compares or edits headers rather
    /// than bytes.
    pub fn parse<T: AsRef<[u8]>>(h: &IntHeader<T>) -> Result<Self> {
        Ok(Self {
            remaining_hops: h.remaining_hops(),
            records: h.records().map(|r| IntRecordRepr::parse(&r)).collect(),
        })
    }

    /// Bytes [`Self::emit`] writes, to size the buffer before emitting.
    pub fn buffer_len(&self) -> usize {
        INT_HEADER_LEN + self.records.len() * INT_RECORD_LEN
    }

    /// Writes header and records. `Oversized` when there are more records
    /// than the stack holds or the buffer is shorter than [`Self::buffer_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut IntHeader<T>) -> Result<()> {
        if self.records.len() > MAX_HOPS {
            return Err(Error::Oversized("INT hop count"));
        }
        if h.buffer.as_ref().len() < self.buffer_len() {
            return Err(Error::Oversized("INT records for their buffer"));
        }
        h.set_hop_count(self.records.len() as u8);
        h.set_remaining_hops(self.remaining_hops);
        h.set_record_words(INT_RECORD_WORDS);
        h.set_reserved(0);
        for (i, r) in self.records.iter().enumerate() {
            r.emit(&mut h.record_mut(i));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> IntRecordRepr {
        IntRecordRepr {
            switch_id: 0x0102_0304,
            ingress_port: 1,
            egress_port: 0x01ff,
            ingress_ts: 0x1122_3344_5566_7788,
            egress_ts: 1_250,
            enq_qdepth: 17,
            deq_timedelta: 0xdead_beef,
        }
    }

    #[test]
    fn golden_bytes() {
        let repr = IntRepr {
            remaining_hops: 40,
            records: vec![record()],
        };
        let mut buf = vec![0xaau8; repr.buffer_len()];
        repr.emit(&mut IntHeader::new_unchecked(&mut buf[..]))
            .unwrap();
        #[rustfmt::skip]
        let want = [
            1, 40, 8, 0, // hop_count, remaining_hops, record_words, reserved
            0x01, 0x02, 0x03, 0x04, // switch_id
            0x00, 0x01, 0x01, 0xff, // ingress_port, egress_port
            0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // ingress_ts
            0, 0, 0, 0, 0, 0, 0x04, 0xe2, // egress_ts 1250
            0, 0, 0, 17, // enq_qdepth
            0xde, 0xad, 0xbe, 0xef, // deq_timedelta
        ];
        assert_eq!(buf, want);
    }

    #[test]
    fn roundtrip_and_checks() {
        let repr = IntRepr {
            remaining_hops: 40,
            records: vec![record(), IntRecordRepr::default()],
        };
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut IntHeader::new_unchecked(&mut buf[..]))
            .unwrap();
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
        buf[0] = (MAX_HOPS + 1) as u8;
        assert_eq!(
            IntHeader::new_checked(&buf[..]).unwrap_err(),
            Error::Oversized("INT hop count")
        );
    }

    #[test]
    fn what_cannot_fit_is_oversized() {
        let too_many = IntRepr {
            remaining_hops: 0,
            records: vec![IntRecordRepr::default(); MAX_HOPS + 1],
        };
        let mut buf = vec![0u8; too_many.buffer_len()];
        assert_eq!(
            too_many.emit(&mut IntHeader::new_unchecked(&mut buf[..])),
            Err(Error::Oversized("INT hop count"))
        );
        let one = IntRepr {
            remaining_hops: 1,
            records: vec![record()],
        };
        assert_eq!(
            one.emit(&mut IntHeader::new_unchecked(&mut buf[..INT_RECORD_LEN])),
            Err(Error::Oversized("INT records for their buffer"))
        );
    }
}
