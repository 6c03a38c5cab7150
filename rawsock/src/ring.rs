//! A receive ring shared with the kernel (`PACKET_RX_RING`, `TPACKET_V2`).
//!
//! The kernel copies each arriving frame straight into the next free slot of
//! a memory area mapped into both sides and flips the slot's status word to
//! "user"; the reader takes frames from the ring with plain memory reads and
//! hands slots back by flipping the word to "kernel". Under load a reader
//! makes no system call at all; only when the ring is empty does it block in
//! `poll(2)`, after a few short naps if it was busy (see [`Linger`]).
//! Compared with `recvmmsg` this saves the socket queue (an skb clone per
//! frame), the per-call copy-out and the system calls.
//!
//! Why `TPACKET_V2` and not `TPACKET_V3`: V3 hands over whole blocks and
//! wakes the reader only when a block is full or its retire timer
//! (`tp_retire_blk_tov`, at least 1 ms) fires, so at low rates every frame
//! would wait up to that long. A switch whose records report queueing delays
//! in microseconds cannot add milliseconds per hop; V2 hands over every frame
//! as it lands and, under load, batches just as well because the reader
//! drains whatever has accumulated before it polls again.
//!
//! A ring rather than a crate: `af_packet` is GPL-3.0 and allocates per
//! block; `netring` is young (dozens of breaking releases) and V3-only for
//! receive. The mechanics are ~150 lines of documented `unsafe` here.

use crate::{check, Options, PacketSocket};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// How large the ring is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingGeometry {
    /// Longest frame delivered whole; longer ones arrive cut (see
    /// [`RxRing::recv`]).
    pub max_frame: usize,
    /// Slots in the ring (rounded up to whole blocks): frames that can wait
    /// for the reader before the kernel drops arrivals.
    pub frames: usize,
}

/// Kernel allocation unit for the ring (a few pages: contiguous memory is
/// easy to find at this size).
const BLOCK_SIZE: usize = 64 << 10;
/// Room before the frame in its slot: `tpacket2_hdr`, `sockaddr_ll` and the
/// kernel's alignment of the network header.
const SLOT_OVERHEAD: usize = 128;

/// A `TPACKET_V2` receive ring bound to one interface.
#[derive(Debug)]
pub struct RxRing {
    sock: PacketSocket,
    /// Start of the mapping: `slots * slot_size` bytes shared with the kernel.
    map: NonNull<u8>,
    map_len: usize,
    slot_size: usize,
    slots: usize,
    /// The slot the next frame lands in (the kernel fills slots in order).
    next: usize,
    /// Naps before blocking, if the reader lingers.
    linger: Option<Linger>,
    /// Whether the last read found frames without blocking: a busy ring
    /// is napped on.
    busy: bool,
}

/// How a reader waits for a ring that just ran dry while frames were
/// flowing: `naps` sleeps of `nap` each, looking at the ring after every
/// one, before it blocks in `poll(2)`.
///
/// A reader blocked in `poll` is woken by the sender of every frame that
/// finds it asleep, in the sender's own system call: on veth that wake-up
/// (an IPI, in a VM an exit) cost a sending switch ~30 % of its CPU. A
/// napping reader is on no wait queue, so senders wake nobody; it wakes on
/// its own timer, on its own CPU. A nap costs a frame at most `nap` (plus
/// timer slack) of waiting, and only while traffic flows: a reader that
/// found nothing in all its naps blocks as before, so an idle port costs
/// nothing and the first frame after a pause wakes it at once; a reader
/// that had to be woken for its frames does not nap next time, so a
/// trickle of frames costs no more than before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Linger {
    pub nap: Duration,
    pub naps: u32,
}

// SAFETY: the mapping belongs to this value alone (no other handle to it
// exists), so moving it to another thread is moving plain memory; `recv`
// needs `&mut self`, so at most one thread reads the ring at a time.
unsafe impl Send for RxRing {}

impl RxRing {
    /// A ring on interface `ifindex` receiving every protocol. `opts.receive`
    /// is implied; `recv_timeout` is ignored (see [`Self::recv`]).
    pub fn open(
        ifindex: u32,
        opts: &Options,
        promiscuous: bool,
        geometry: RingGeometry,
    ) -> io::Result<Self> {
        // Protocol 0 until bind: the socket joins no receive path (on any
        // interface) before the ring exists and the interface is set.
        let sock = PacketSocket::new(&Options {
            receive: false,
            ..*opts
        })?;
        let version = libc::tpacket_versions::TPACKET_V2 as libc::c_int;
        sock.set_opt(libc::SOL_PACKET, libc::PACKET_VERSION, &version)?;
        let slot_size =
            (geometry.max_frame + SLOT_OVERHEAD).next_multiple_of(libc::TPACKET_ALIGNMENT);
        if slot_size > BLOCK_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "frames larger than a ring block",
            ));
        }
        let per_block = BLOCK_SIZE / slot_size;
        let blocks = geometry.frames.div_ceil(per_block).max(1);
        let slots = blocks * per_block;
        let req = libc::tpacket_req {
            tp_block_size: BLOCK_SIZE as libc::c_uint,
            tp_block_nr: blocks as libc::c_uint,
            tp_frame_size: slot_size as libc::c_uint,
            tp_frame_nr: slots as libc::c_uint,
        };
        sock.set_opt(libc::SOL_PACKET, libc::PACKET_RX_RING, &req)?;
        let map_len = blocks * BLOCK_SIZE;
        // SAFETY: maps the ring the kernel just allocated for this socket;
        // the result is checked and unmapped in Drop.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                sock.fd.as_raw_fd(),
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ring = Self {
            sock,
            map: NonNull::new(raw.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?,
            map_len,
            slot_size,
            slots,
            next: 0,
            linger: None,
            busy: false,
        };
        ring.sock
            .bind(ifindex, (libc::ETH_P_ALL as u16).to_be(), promiscuous)?;
        Ok(ring)
    }

    /// Where slot `i` starts: slots never straddle blocks, so a block's tail
    /// that holds no whole slot is skipped.
    fn slot(&self, i: usize) -> *mut u8 {
        let per_block = BLOCK_SIZE / self.slot_size;
        let offset = (i / per_block) * BLOCK_SIZE + (i % per_block) * self.slot_size;
        debug_assert!(offset + self.slot_size <= self.map_len);
        // SAFETY: `offset` lies inside the mapping (i < slots).
        unsafe { self.map.as_ptr().add(offset) }
    }

    /// The status word of slot `i`, which the kernel and we hand the slot
    /// over with.
    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: every slot starts with a `tpacket2_hdr` whose first field
        // is the u32 status; slots are 16-byte aligned in a page-aligned
        // mapping that lives as long as `self`. The kernel writes it
        // concurrently, hence the atomic.
        unsafe { AtomicU32::from_ptr(self.slot(i).cast::<u32>()) }
    }

    /// Hands at most `max` waiting frames to `each`, oldest first, and
    /// returns how many it handed. When none is waiting, naps first if the
    /// reader lingers and was busy (see [`Linger`]), then blocks in `poll(2)`
    /// for up to `timeout`; a quiet timeout is `Ok(0)`. A frame longer than
    /// the ring's `max_frame` is handed as `Err(its length)`.
    pub fn recv(
        &mut self,
        max: usize,
        timeout: Duration,
        mut each: impl FnMut(Result<&[u8], usize>),
    ) -> io::Result<usize> {
        let waiting = self.ready() || (self.busy && self.nap_until_ready());
        if !waiting {
            self.wait(timeout)?;
        }
        let mut n = 0;
        while n < max && self.ready() {
            let slot = self.slot(self.next);
            // SAFETY: the status word said "user" (read with Acquire after
            // the kernel's write barrier), so the kernel has finished the
            // header and the frame and will not touch the slot until we hand
            // it back below; the header is a `tpacket2_hdr` at the slot's start.
            let hdr = unsafe { &*slot.cast::<libc::tpacket2_hdr>() };
            let (mac, snap) = (usize::from(hdr.tp_mac), hdr.tp_snaplen as usize);
            if mac + snap <= self.slot_size {
                // SAFETY: as above; the frame lies inside the slot (checked).
                let frame = unsafe { std::slice::from_raw_parts(slot.add(mac), snap) };
                if snap < hdr.tp_len as usize {
                    each(Err(hdr.tp_len as usize));
                } else {
                    each(Ok(frame));
                }
            }
            // Release: our reads of the slot happen before the kernel reuses it.
            self.status(self.next)
                .store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.next = (self.next + 1) % self.slots;
            n += 1;
        }
        // Frames that needed a wake-up from `poll` are a trickle, not a
        // flow: napping after each would cost more than the wake-ups.
        self.busy = n > 0 && waiting;
        Ok(n)
    }

    /// Makes the reader nap on a ring that ran dry while busy, instead of
    /// blocking at once (see [`Linger`]).
    pub fn set_linger(&mut self, linger: Option<Linger>) {
        self.linger = linger;
    }

    /// Naps as `linger` says until a frame is waiting; false if none came.
    fn nap_until_ready(&self) -> bool {
        let Some(l) = self.linger else {
            return false;
        };
        (0..l.naps).any(|_| {
            std::thread::sleep(l.nap);
            self.ready()
        })
    }

    /// Whether the next slot holds a frame for us.
    fn ready(&self) -> bool {
        self.status(self.next).load(Ordering::Acquire) & libc::TP_STATUS_USER != 0
    }

    /// Blocks until the ring may hold a frame, the timeout passes or the
    /// socket reports an error. An error (the interface went down:
    /// `ENETDOWN`) is returned once and cleared; otherwise `poll` would
    /// report it again at once and the caller would spin.
    fn wait(&self, timeout: Duration) -> io::Result<()> {
        let mut pfd = libc::pollfd {
            fd: self.sock.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: one live pollfd, count 1.
        match check(unsafe { libc::poll(&mut pfd, 1, ms) }) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        if pfd.revents & libc::POLLERR == 0 {
            return Ok(());
        }
        let mut err: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `err` and `len` are live and sized for SO_ERROR's int;
        // reading SO_ERROR also clears the pending error.
        check(unsafe {
            libc::getsockopt(
                self.sock.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut err as *mut libc::c_int).cast(),
                &mut len,
            )
        })?;
        match err {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `open`; no reference
        // into it outlives `&mut self` (frames are only lent to `each`).
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), self.map_len);
        }
    }
}

impl AsFd for RxRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-slot ring for frames up to 100 bytes and a sender, both on a
    /// loopback of this thread's own network namespace.
    fn loopback_ring() -> (RxRing, PacketSocket) {
        let geometry = RingGeometry {
            max_frame: 100,
            frames: 64,
        };
        let opts = Options {
            // Loopback shows a frame twice, leaving and arriving: keep one.
            ignore_outgoing: true,
            ..Options::default()
        };
        let lo = crate::tests::private_loopback();
        let rx = RxRing::open(lo, &opts, false, geometry).unwrap();
        let tx = PacketSocket::open(lo, &Options::default(), false).unwrap();
        (rx, tx)
    }

    #[test]
    #[ignore = "needs root"]
    fn frames_sent_on_loopback_come_out_of_the_ring_in_order_and_long_ones_cut() {
        let (mut rx, tx) = loopback_ring();
        // More frames than the ring has slots in one block, so the reader
        // wraps; frame 7 is longer than `max_frame`.
        let frames: Vec<Vec<u8>> = (0..40u8)
            .map(|i| {
                let mut f = vec![0u8; if i == 7 { 400 } else { 60 + usize::from(i) }];
                f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
                f[14] = i;
                f
            })
            .collect();
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        for chunk in frames.chunks(10) {
            let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
            tx.send_all(&refs).unwrap();
            let want = seen.len() + chunk.len();
            while seen.len() < want && std::time::Instant::now() < deadline {
                rx.recv(8, Duration::from_millis(200), |f| match f {
                    Ok(f) if f[12..14] == [0x88, 0xb5] => {
                        assert_eq!(f.len(), 60 + usize::from(f[14]));
                        seen.push(Ok(f[14]));
                    }
                    Ok(_) => {}
                    Err(len) => seen.push(Err(len)),
                })
                .unwrap();
            }
        }
        let want: Vec<Result<u8, usize>> = (0..40u8)
            .map(|i| if i == 7 { Err(400) } else { Ok(i) })
            .collect();
        assert_eq!(seen, want);
        // Nothing more of ours: a quiet poll hands no test frame.
        rx.recv(8, Duration::from_millis(50), |f| {
            assert!(
                f.is_ok_and(|f| f[12..14] != [0x88, 0xb5]),
                "no test frame left"
            );
        })
        .unwrap();
    }

    #[test]
    #[ignore = "needs root"]
    fn a_busy_reader_naps_before_blocking_and_takes_frames_that_land_meanwhile() {
        let (mut rx, tx) = loopback_ring();
        // Naps long enough that a loaded machine's scheduling delays (a
        // few ms) neither make a quick read look like a nap nor let the
        // frame sent 2 ms in arrive after the naps.
        let nap = Duration::from_millis(40);
        rx.set_linger(Some(Linger { nap, naps: 4 }));
        let mut frame = vec![0u8; 60];
        frame[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
        let ours = |f: &[u8]| f[12..14] == [0x88, 0xb5];
        let count = |rx: &mut RxRing, timeout| {
            let mut n = 0;
            rx.recv(8, timeout, |f| n += usize::from(f.is_ok_and(ours)))
                .unwrap();
            n
        };
        // Idle: a quiet ring is not napped on; `poll` returns at its timeout.
        let t = std::time::Instant::now();
        assert_eq!(count(&mut rx, Duration::ZERO), 0);
        assert!(t.elapsed() < nap, "{:?}", t.elapsed());
        // Busy: after a read that found a frame, an empty ring is napped on
        // (4 × 40 ms) before `poll`, and a frame sent 2 ms into the naps is
        // what the read returns, though `poll` itself would not wait.
        tx.send_all(&[&frame]).unwrap();
        assert_eq!(count(&mut rx, Duration::from_secs(1)), 1);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(2));
                tx.send_all(&[&frame]).unwrap();
            });
            assert_eq!(count(&mut rx, Duration::ZERO), 1);
        });
        // Nothing more: all four naps, then a `poll` that finds nothing.
        let t = std::time::Instant::now();
        assert_eq!(count(&mut rx, Duration::ZERO), 0);
        assert!(t.elapsed() >= 4 * nap, "{:?}", t.elapsed());
        // That read found nothing, so the next one blocks at once.
        let t = std::time::Instant::now();
        assert_eq!(count(&mut rx, Duration::ZERO), 0);
        assert!(t.elapsed() < nap, "{:?}", t.elapsed());
        // A trickle: a frame that `poll` had to wake the reader for does
        // not make the next read nap.
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(2));
                tx.send_all(&[&frame]).unwrap();
            });
            assert_eq!(count(&mut rx, Duration::from_secs(1)), 1);
        });
        let t = std::time::Instant::now();
        assert_eq!(count(&mut rx, Duration::ZERO), 0);
        assert!(t.elapsed() < nap, "{:?}", t.elapsed());
    }
}
