//! Linux `AF_PACKET` sockets bound to one interface, sending and receiving
//! whole batches per system call (`sendmmsg(2)` / `recvmmsg(2)`), and a
//! receive ring shared with the kernel ([`RxRing`]) that needs no system
//! call per batch at all while frames keep coming.
//!
//! The switch's ports and probe-gen's transmitter both need this, and it is
//! the only `unsafe` either needs for the network, so it lives here once.
//! `libc` rather than `nix` or `socket2`: neither offers the packet-socket
//! options used here (`PACKET_ADD_MEMBERSHIP`, `PACKET_IGNORE_OUTGOING`,
//! `PACKET_QDISC_BYPASS`) nor an allocation-free `mmsg` batch, so they would
//! add a dependency and keep the raw calls.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::time::Duration;

mod ring;
pub use ring::{Linger, RingGeometry, RxRing};

/// Most frames one system call carries (the kernel caps a call at
/// `UIO_MAXIOV` = 1024; 64 already makes the per-call cost negligible).
pub const MAX_BATCH: usize = 64;

/// Not every libc release names it (Linux 4.20+).
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// How a socket is set up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Join the receive path for every protocol (`ETH_P_ALL`). Without it
    /// the socket is transmit-only: the kernel never queues arrivals to it,
    /// which a sender on a busy link would otherwise pay for.
    pub receive: bool,
    /// Leave out frames this host sends on the interface itself.
    pub ignore_outgoing: bool,
    /// Skip the interface's traffic-control queue (faster, but also skips
    /// shaping such as Mininet's `TCLink` bandwidth and delay emulation).
    pub qdisc_bypass: bool,
    /// How long a receive call blocks before returning empty.
    pub recv_timeout: Option<Duration>,
    /// Socket buffer size for both directions; best effort (needs root to
    /// exceed the system maximum), failure only costs burst headroom.
    pub buffer_bytes: Option<usize>,
}

/// An `AF_PACKET` raw socket.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn protocol(opts: &Options) -> u16 {
    if opts.receive {
        (libc::ETH_P_ALL as u16).to_be()
    } else {
        0
    }
}

impl PacketSocket {
    /// A configured socket, not yet bound to an interface (see
    /// [`Self::bind`], or hand it to another library with `into_raw_fd`).
    pub fn new(opts: &Options) -> io::Result<Self> {
        // SAFETY: plain socket(2); the result is checked before use.
        let raw = check(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::c_int::from(protocol(opts)),
            )
        })?;
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let s = Self {
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
        };
        if opts.ignore_outgoing {
            s.set_opt(libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1)?;
        }
        if opts.qdisc_bypass {
            s.set_opt(libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &1)?;
        }
        if let Some(bytes) = opts.buffer_bytes {
            let bytes = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
            let _ = s.set_opt(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &bytes);
            let _ = s.set_opt(libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &bytes);
        }
        if let Some(t) = opts.recv_timeout {
            let tv = libc::timeval {
                tv_sec: t.as_secs() as libc::time_t,
                tv_usec: libc::suseconds_t::from(t.subsec_micros()),
            };
            s.set_opt(libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv)?;
        }
        Ok(s)
    }

    /// A socket bound to interface `ifindex`.
    pub fn open(ifindex: u32, opts: &Options, promiscuous: bool) -> io::Result<Self> {
        let s = Self::new(opts)?;
        s.bind(ifindex, protocol(opts), promiscuous)?;
        Ok(s)
    }

    fn set_opt<T>(&self, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
        // SAFETY: `value` points to a live T of the size given.
        check(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (value as *const T).cast(),
                std::mem::size_of::<T>() as libc::socklen_t,
            )
        })
        .map(|_| ())
    }

    fn bind(&self, ifindex: u32, protocol: u16, promiscuous: bool) -> io::Result<()> {
        let index = libc::c_int::try_from(ifindex)
            .map_err(|_| io::Error::other("interface index out of range"))?;
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = protocol;
        addr.sll_ifindex = index;
        // SAFETY: `addr` is a live, initialised sockaddr_ll of the given size.
        check(unsafe {
            libc::bind(
                self.fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        if promiscuous {
            // SAFETY: packet_mreq is plain data; all-zero is a valid value.
            let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
            mreq.mr_ifindex = index;
            mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
            self.set_opt(libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)?;
        }
        Ok(())
    }

    /// Sends a prefix of `frames` (at most [`MAX_BATCH`]) in one call and
    /// returns its length; an error means `frames[0]` was refused.
    pub fn send_batch(&self, frames: &[&[u8]]) -> io::Result<usize> {
        let n = frames.len().min(MAX_BATCH);
        if n == 0 {
            return Ok(0);
        }
        let mut iov = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; MAX_BATCH];
        // SAFETY: mmsghdr is plain data; all-zero (null name and control,
        // no iovecs) is a valid value.
        let mut msgs: [libc::mmsghdr; MAX_BATCH] = unsafe { std::mem::zeroed() };
        for ((frame, v), m) in frames.iter().zip(&mut iov).zip(&mut msgs) {
            // The kernel only reads through iov_base on send.
            v.iov_base = frame.as_ptr() as *mut libc::c_void;
            v.iov_len = frame.len();
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
        }
        loop {
            // SAFETY: the first `n` headers point at iovecs that point at the
            // borrowed frames, all alive for the call; with a null msg_name
            // the socket's bound device is used.
            let rc = unsafe {
                libc::sendmmsg(self.fd.as_raw_fd(), msgs.as_mut_ptr(), n as libc::c_uint, 0)
            };
            if rc >= 0 {
                return Ok(rc as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Sends every frame of `frames`, as many calls as it takes.
    pub fn send_all(&self, frames: &[&[u8]]) -> io::Result<()> {
        let mut sent = 0;
        while sent < frames.len() {
            sent += self.send_batch(&frames[sent..])?.max(1);
        }
        Ok(())
    }

    /// Receives up to `bufs.len()` frames (at most [`MAX_BATCH`]) into the
    /// areas `area` gives, waiting for the first one at most the receive
    /// timeout. Returns how many arrived; `lens[i]` is frame `i`'s length, or
    /// `None` when it was longer than its area and got cut. A quiet timeout
    /// is `Ok(0)`.
    pub fn recv_batch<B>(
        &self,
        bufs: &mut [B],
        area: fn(&mut B) -> &mut [u8],
        lens: &mut [Option<usize>],
    ) -> io::Result<usize> {
        let n = bufs.len().min(lens.len()).min(MAX_BATCH);
        // SAFETY: iovec and mmsghdr are plain data; zero is a valid start.
        let mut iov: [libc::iovec; MAX_BATCH] = unsafe { std::mem::zeroed() };
        let mut msgs: [libc::mmsghdr; MAX_BATCH] = unsafe { std::mem::zeroed() };
        for ((b, v), m) in bufs.iter_mut().zip(&mut iov).zip(&mut msgs).take(n) {
            let a = area(b);
            v.iov_base = a.as_mut_ptr().cast();
            v.iov_len = a.len();
            m.msg_hdr.msg_iov = v;
            m.msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: every header points to one iovec into a live buffer of the
        // stated length, which the kernel writes at most.
        let got = unsafe {
            libc::recvmmsg(
                self.fd.as_raw_fd(),
                msgs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if got < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock
                | io::ErrorKind::TimedOut
                | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        let got = got as usize;
        for (len, m) in lens.iter_mut().zip(&msgs).take(got) {
            *len = (m.msg_hdr.msg_flags & libc::MSG_TRUNC == 0).then_some(m.msg_len as usize);
        }
        Ok(got)
    }
}

impl AsFd for PacketSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl IntoRawFd for PacketSocket {
    fn into_raw_fd(self) -> RawFd {
        self.fd.into_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Moves the calling thread into a fresh network namespace with its
    /// loopback interface up, so that no other traffic (other tests, other
    /// programs on the host's loopback) reaches the sockets it opens, and
    /// returns that interface's index.
    pub(crate) fn private_loopback() -> u32 {
        // SAFETY: unshare only changes the calling thread's namespaces.
        check(unsafe { libc::unshare(libc::CLONE_NEWNET) }).expect("unshare(CLONE_NEWNET)");
        // A child forked from this thread starts in its namespace.
        let up = std::process::Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status()
            .expect("ip link set lo up");
        assert!(up.success());
        let name = std::ffi::CString::new("lo").unwrap();
        // SAFETY: a NUL-terminated name; the call only reads it.
        unsafe { libc::if_nametoindex(name.as_ptr()) }
    }

    #[test]
    #[ignore = "needs root"]
    fn a_batch_sent_on_loopback_comes_back_in_one_receive() {
        let rx_opts = Options {
            receive: true,
            // Loopback shows a frame twice, leaving and arriving: keep one.
            ignore_outgoing: true,
            recv_timeout: Some(Duration::from_millis(200)),
            ..Options::default()
        };
        let lo = private_loopback();
        let rx = PacketSocket::open(lo, &rx_opts, false).unwrap();
        let tx = PacketSocket::open(lo, &Options::default(), false).unwrap();
        // Ethernet frames with an EtherType nobody else uses on loopback.
        let frames: Vec<Vec<u8>> = (0..5u8)
            .map(|i| {
                let mut f = vec![0u8; 60];
                f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
                f[14] = i;
                f
            })
            .collect();
        let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
        tx.send_all(&refs).unwrap();
        let mut bufs = vec![vec![0u8; 2048]; 8];
        let mut lens = [None; 8];
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while seen.len() < 5 && std::time::Instant::now() < deadline {
            let n = rx.recv_batch(&mut bufs, |b| &mut b[..], &mut lens).unwrap();
            for (b, len) in bufs.iter().zip(&lens).take(n) {
                let len = len.expect("not truncated");
                if len == 60 && b[12..14] == [0x88, 0xb5] {
                    seen.push(b[14]);
                }
            }
        }
        assert_eq!(seen, [0, 1, 2, 3, 4]);
        // An area smaller than the frame reports it cut.
        tx.send_all(&refs[..1]).unwrap();
        let mut small = vec![vec![0u8; 20]; 1];
        let mut lens = [Some(0); 1];
        let mut cut = false;
        for _ in 0..20 {
            if rx
                .recv_batch(&mut small, |b| &mut b[..], &mut lens)
                .unwrap()
                == 1
                && small[0][12..14] == [0x88, 0xb5]
            {
                cut = lens[0].is_none();
                break;
            }
        }
        assert!(cut, "a 60-byte frame in a 20-byte area is reported as cut");
    }
}
