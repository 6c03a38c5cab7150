//! A transmit-only `AF_PACKET` socket that sends a whole batch per
//! `sendmmsg(2)` call.
//!
//! pnet's datalink sender costs a `poll` and a `sendto` per frame; at the
//! rates the benchmark asks for, system call entry dominates, so this
//! transport amortises it over up to [`AfPacket::MAX_BATCH`] frames. The
//! socket is opened with protocol 0, which registers no receive hook: the
//! kernel never queues incoming traffic to it, which a receiving socket on a
//! busy link would pay for.

use super::{Interface, OpenError, Transport};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Transmit-only packet socket bound to one interface.
#[derive(Debug)]
pub struct AfPacket {
    fd: OwnedFd,
}

impl AfPacket {
    /// Most frames one `sendmmsg` call carries (the kernel caps a call at
    /// `UIO_MAXIOV` = 1024; 64 already makes the call cost negligible).
    pub const MAX_BATCH: usize = 64;

    /// Opens the socket on `iface`. With `qdisc_bypass` frames skip the
    /// interface's traffic-control queue (faster, but also skips shaping such
    /// as Mininet's `TCLink` bandwidth and delay emulation).
    pub fn open(iface: &Interface, qdisc_bypass: bool) -> Result<Self, OpenError> {
        let err = |source| OpenError::Socket {
            name: iface.name.clone(),
            source,
        };
        // SAFETY: plain system call with constant arguments; the result is
        // checked before it is used as a descriptor.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(err(io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let ifindex = i32::try_from(iface.index)
            .map_err(|_| err(io::Error::other("interface index out of range")))?;
        // Protocol 0 in the address: bind to the device without joining any
        // receive path. The kernel reads each frame's EtherType when sending.
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_ifindex = ifindex;
        // SAFETY: `addr` is a live, initialised sockaddr_ll of the given size.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(err(io::Error::last_os_error()));
        }
        if qdisc_bypass {
            let one: libc::c_int = 1;
            // SAFETY: the option value is a live c_int of the given size.
            let rc = unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    libc::PACKET_QDISC_BYPASS,
                    (&one as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            if rc != 0 {
                return Err(err(io::Error::last_os_error()));
            }
        }
        Ok(Self { fd })
    }
}

impl Transport for AfPacket {
    fn send_batch(&mut self, frames: &[&[u8]]) -> io::Result<usize> {
        let n = frames.len().min(Self::MAX_BATCH);
        if n == 0 {
            return Ok(0);
        }
        let mut iov = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; Self::MAX_BATCH];
        // SAFETY: mmsghdr is plain data; all-zero (null name and control,
        // no iovecs) is a valid value.
        let mut msgs: [libc::mmsghdr; Self::MAX_BATCH] = unsafe { std::mem::zeroed() };
        for ((frame, v), m) in frames.iter().zip(&mut iov).zip(&mut msgs).take(n) {
            // The kernel only reads through iov_base on send.
            v.iov_base = frame.as_ptr() as *mut libc::c_void;
            v.iov_len = frame.len();
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
        }
        loop {
            // SAFETY: the first `n` headers point at iovecs that point at the
            // borrowed frames; all of them outlive the call. With a null
            // msg_name the socket's bound device is used.
            let rc = unsafe { libc::sendmmsg(self.fd.as_raw_fd(), msgs.as_mut_ptr(), n as u32, 0) };
            if rc >= 0 {
                return Ok(rc as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}
