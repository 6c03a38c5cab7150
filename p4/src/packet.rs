//! A frame buffer with headroom, reused from packet to packet.
//!
//! The pipeline grows probes in the middle (labels pushed, a record pushed
//! after the INT header) and at the front (packet-in header). Everything
//! before the insertion point is at most ~150 bytes while the records after it
//! may be 1.4 KB, so gaps are opened by moving the head into the headroom.

/// Bytes kept free before the frame.
pub const HEADROOM: usize = 256;
/// Largest frame the switch accepts (standard MTU plus headroom for growth).
pub const MAX_FRAME: usize = 2048;
const CAPACITY: usize = HEADROOM + MAX_FRAME;

/// Why a frame does not fit in a packet buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("frame of {0} bytes exceeds the switch's {MAX_FRAME}-byte buffers")]
pub struct TooLong(pub usize);

#[derive(Clone)]
pub struct PacketBuf {
    buf: Box<[u8; CAPACITY]>,
    start: usize,
    end: usize,
}

impl Default for PacketBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for PacketBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PacketBuf({} bytes)", self.len())
    }
}

impl PacketBuf {
    pub fn new() -> Self {
        Self {
            buf: Box::new([0; CAPACITY]),
            start: HEADROOM,
            end: HEADROOM,
        }
    }

    /// Replaces the content with `frame`.
    pub fn load(&mut self, frame: &[u8]) -> Result<(), TooLong> {
        if frame.len() > MAX_FRAME {
            return Err(TooLong(frame.len()));
        }
        self.start = HEADROOM;
        self.end = HEADROOM + frame.len();
        self.buf[self.start..self.end].copy_from_slice(frame);
        Ok(())
    }

    pub fn from_frame(frame: &[u8]) -> Result<Self, TooLong> {
        let mut p = Self::new();
        p.load(frame)?;
        Ok(p)
    }

    /// The room at the end where a receive call may write a frame directly;
    /// follow with [`Self::set_received`].
    pub fn receive_area(&mut self) -> &mut [u8] {
        &mut self.buf[HEADROOM..]
    }

    pub fn set_received(&mut self, len: usize) {
        self.start = HEADROOM;
        self.end = HEADROOM + len.min(MAX_FRAME);
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.end]
    }

    /// Drops `n` bytes from the front (a stripped controller header).
    pub fn pull_front(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Opens `n` bytes at the front and returns them.
    pub fn push_front(&mut self, n: usize) -> Result<&mut [u8], TooLong> {
        if n > self.start {
            return Err(TooLong(self.len() + n));
        }
        self.start -= n;
        Ok(&mut self.buf[self.start..self.start + n])
    }

    /// Opens `n` zeroed bytes at offset `at` of the frame (moving the head
    /// into the headroom when it can, else the tail towards the end).
    pub fn insert_gap(&mut self, at: usize, n: usize) -> Result<&mut [u8], TooLong> {
        let at = at.min(self.len());
        if n <= self.start {
            self.buf
                .copy_within(self.start..self.start + at, self.start - n);
            self.start -= n;
        } else if self.end + n <= CAPACITY {
            self.buf
                .copy_within(self.start + at..self.end, self.start + at + n);
            self.end += n;
        } else {
            return Err(TooLong(self.len() + n));
        }
        let gap = &mut self.buf[self.start + at..self.start + at + n];
        gap.fill(0);
        Ok(gap)
    }

    /// Removes `n` bytes at offset `at` by moving the head forward.
    pub fn remove(&mut self, at: usize, n: usize) {
        let at = at.min(self.len());
        let n = n.min(self.len() - at);
        self.buf
            .copy_within(self.start..self.start + at, self.start + n);
        self.start += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_and_removals_keep_bytes_in_order() {
        let mut p = PacketBuf::from_frame(&[1, 2, 3, 4, 5]).unwrap();
        p.insert_gap(2, 3).unwrap().copy_from_slice(&[9, 9, 9]);
        assert_eq!(p.data(), &[1, 2, 9, 9, 9, 3, 4, 5]);
        p.remove(1, 2);
        assert_eq!(p.data(), &[1, 9, 9, 3, 4, 5]);
        p.push_front(2).unwrap().copy_from_slice(&[7, 7]);
        assert_eq!(p.data(), &[7, 7, 1, 9, 9, 3, 4, 5]);
        p.pull_front(3);
        assert_eq!(p.data(), &[9, 9, 3, 4, 5]);
        // Headroom exhausted: the tail moves instead.
        let mut q = PacketBuf::from_frame(&[1, 2]).unwrap();
        q.insert_gap(1, HEADROOM + 1).unwrap();
        assert_eq!(q.len(), HEADROOM + 3);
        assert_eq!(q.data()[0], 1);
        assert_eq!(q.data()[HEADROOM + 2], 2);
        assert!(PacketBuf::from_frame(&[0; MAX_FRAME + 1]).is_err());
    }
}
