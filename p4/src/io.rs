//! Frame I/O on Linux interfaces through AF_PACKET sockets.
//!
//! Two backends share one socket set-up (bound to the interface,
//! promiscuous, `PACKET_IGNORE_OUTGOING` so that frames the host itself
//! sends on a switch port are not taken for arrivals):
//! - `mmsg` (default): `recvmmsg` / `sendmmsg`, up to [`BATCH`] frames per
//!   system call, received straight into the packet buffers;
//! - `pnet`: pnet's datalink channel on the same socket, one frame per
//!   `poll` + `recvfrom` (and `poll` + `sendto`), copied out of pnet's buffer.
//!
//! Interfaces are looked up with pnet in both cases.

use crate::packet::{PacketBuf, MAX_FRAME};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

/// Frames per system call in the `mmsg` backend.
pub const BATCH: usize = 32;
/// How long a receive call blocks before the caller checks for shutdown.
const RECV_TIMEOUT: Duration = Duration::from_millis(100);
/// Not every libc release names it (Linux 4.20+).
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const SOCKET_BUFFER: libc::c_int = 4 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// recvmmsg/sendmmsg batches on an AF_PACKET socket.
    Mmsg,
    /// pnet's datalink channel, one frame per system call pair.
    Pnet,
}

pub trait FrameRx: Send {
    /// Receives up to `bufs.len()` frames; 0 after a quiet timeout.
    fn recv(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize>;
}

pub trait FrameTx: Send {
    /// Sends every frame of `frames`.
    fn send(&mut self, frames: &[&[u8]]) -> io::Result<()>;
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn set_opt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live T of the given size.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

fn ifindex(name: &str) -> io::Result<pnet_datalink::NetworkInterface> {
    pnet_datalink::interfaces()
        .into_iter()
        .find(|i| i.name == name)
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no interface {name}")))
}

/// An AF_PACKET socket for every protocol, configured but not bound.
fn packet_socket() -> io::Result<OwnedFd> {
    let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
    // SAFETY: plain socket(2); the fd is owned right away.
    let fd = check(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, proto) })?;
    // SAFETY: fd was just returned by socket(2) and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let raw = fd.as_raw_fd();
    set_opt(
        raw,
        libc::SOL_PACKET,
        PACKET_IGNORE_OUTGOING,
        &1 as &libc::c_int,
    )?;
    // Bigger buffers absorb bursts; failure only costs headroom.
    let _ = set_opt(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &SOCKET_BUFFER);
    let _ = set_opt(raw, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &SOCKET_BUFFER);
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: RECV_TIMEOUT.as_micros() as libc::suseconds_t,
    };
    set_opt(raw, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv)?;
    Ok(fd)
}

fn bind_promisc(fd: RawFd, index: u32) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data; zero is a valid start.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
    addr.sll_ifindex = index as libc::c_int;
    // SAFETY: addr is a valid sockaddr_ll of the length given.
    check(unsafe {
        libc::bind(
            fd,
            (&addr as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })?;
    // SAFETY: packet_mreq is plain data.
    let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
    mreq.mr_ifindex = index as libc::c_int;
    mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
    set_opt(fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
}

/// Opens interface `name` with `backend`: a receiver and a sender.
pub fn open(name: &str, backend: Backend) -> io::Result<(Box<dyn FrameRx>, Box<dyn FrameTx>)> {
    let iface = ifindex(name)?;
    let fd = packet_socket()?;
    match backend {
        Backend::Mmsg => {
            bind_promisc(fd.as_raw_fd(), iface.index)?;
            let fd = Arc::new(fd);
            Ok((Box::new(MmsgRx { fd: fd.clone() }), Box::new(MmsgTx { fd })))
        }
        Backend::Pnet => {
            let config = pnet_datalink::Config {
                read_buffer_size: MAX_FRAME,
                write_buffer_size: MAX_FRAME,
                read_timeout: Some(RECV_TIMEOUT),
                promiscuous: true,
                // pnet binds and owns the socket from here on.
                socket_fd: Some(std::os::fd::IntoRawFd::into_raw_fd(fd)),
                ..Default::default()
            };
            match pnet_datalink::channel(&iface, config)? {
                pnet_datalink::Channel::Ethernet(tx, rx) => {
                    Ok((Box::new(PnetRx(rx)), Box::new(PnetTx(tx))))
                }
                _ => Err(io::Error::other("pnet: not an Ethernet channel")),
            }
        }
    }
}

struct MmsgRx {
    fd: Arc<OwnedFd>,
}

struct MmsgTx {
    fd: Arc<OwnedFd>,
}

fn would_block(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

impl FrameRx for MmsgRx {
    fn recv(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        let n = bufs.len().min(BATCH);
        // SAFETY: iovec and mmsghdr are plain data; zero is a valid start.
        let mut iov: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
        let mut msgs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        for i in 0..n {
            let area = bufs[i].receive_area();
            iov[i].iov_base = area.as_mut_ptr().cast();
            iov[i].iov_len = area.len();
            msgs[i].msg_hdr.msg_iov = &mut iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: every msghdr points to one iovec into a live buffer of the
        // stated length; the kernel writes at most that much.
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
            return if would_block(&e) { Ok(0) } else { Err(e) };
        }
        let mut kept = 0;
        for (i, msg) in msgs.iter().enumerate().take(got as usize) {
            // A frame longer than the buffer was cut: drop it.
            if msg.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                continue;
            }
            if kept != i {
                bufs.swap(kept, i);
            }
            bufs[kept].set_received(msg.msg_len as usize);
            kept += 1;
        }
        Ok(kept)
    }
}

impl FrameTx for MmsgTx {
    fn send(&mut self, frames: &[&[u8]]) -> io::Result<()> {
        for chunk in frames.chunks(BATCH) {
            // SAFETY: plain data, see recv.
            let mut iov: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
            let mut msgs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
            for (i, f) in chunk.iter().enumerate() {
                iov[i].iov_base = f.as_ptr() as *mut libc::c_void;
                iov[i].iov_len = f.len();
                msgs[i].msg_hdr.msg_iov = &mut iov[i];
                msgs[i].msg_hdr.msg_iovlen = 1;
            }
            let mut sent = 0;
            while sent < chunk.len() {
                // SAFETY: the headers point into `chunk`, alive for the call;
                // the kernel only reads them.
                let r = unsafe {
                    libc::sendmmsg(
                        self.fd.as_raw_fd(),
                        msgs[sent..].as_mut_ptr(),
                        (chunk.len() - sent) as libc::c_uint,
                        0,
                    )
                };
                if r < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e);
                }
                sent += r as usize;
            }
        }
        Ok(())
    }
}

struct PnetRx(Box<dyn pnet_datalink::DataLinkReceiver>);
struct PnetTx(Box<dyn pnet_datalink::DataLinkSender>);

impl FrameRx for PnetRx {
    fn recv(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        let Some(buf) = bufs.first_mut() else {
            return Ok(0);
        };
        match self.0.next() {
            Ok(frame) => match buf.load(frame) {
                Ok(()) => Ok(1),
                Err(_) => Ok(0),
            },
            Err(e) if would_block(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }
}

impl FrameTx for PnetTx {
    fn send(&mut self, frames: &[&[u8]]) -> io::Result<()> {
        for f in frames {
            self.0
                .send_to(f, None)
                .unwrap_or_else(|| Err(io::Error::other("pnet: frame too large")))?;
        }
        Ok(())
    }
}
