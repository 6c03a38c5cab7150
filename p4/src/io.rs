//! Frame I/O on Linux interfaces through AF_PACKET sockets.
//!
//! Three backends share one receive set-up (bound to the interface,
//! promiscuous, `PACKET_IGNORE_OUTGOING` so that frames the host itself
//! sends on a switch port are not taken for arrivals):
//! - `ring` (default): a `TPACKET_V2` receive ring shared with the kernel,
//!   read without system calls while frames keep coming and copied into the
//!   packet buffers; a separate transmit-only socket sends with `sendmmsg`;
//! - `mmsg`: `recvmmsg` / `sendmmsg` on one socket, up to [`BATCH`] frames
//!   per system call, received straight into the packet buffers;
//! - `pnet`: pnet's datalink channel on the same socket, one frame per
//!   `poll` + `recvfrom` (and `poll` + `sendto`), copied out of pnet's buffer.
//!
//! Interfaces are looked up with pnet in every case; the sockets themselves
//! come from `intpath-rawsock`, shared with probe-gen.

use crate::packet::{PacketBuf, MAX_FRAME};
use intpath_rawsock::{Linger, Options, PacketSocket, RingGeometry, RxRing};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Frames per system call in the `mmsg` backend.
pub const BATCH: usize = 32;
/// How long a receive call blocks before the caller checks for shutdown.
const RECV_TIMEOUT: Duration = Duration::from_millis(100);
/// The same for the ring, whose idle thread should cost nothing: four
/// wake-ups a second, and a switch stops within a quarter of a second.
const RING_TIMEOUT: Duration = Duration::from_millis(250);
const SOCKET_BUFFER: usize = 4 << 20;
/// A ring reader that ran dry while frames flowed naps 4 × 20 µs before it
/// blocks, so that the switches and hosts sending to it need not wake it
/// (2.0–2.3× the frames per CPU-second on veth, BENCHMARKS.md). A frame that
/// lands during a nap waits at most 20 µs (the receive threads' timer slack
/// is 1 ns), less than a 1500-byte frame takes on a 500 Mbit/s link.
const LINGER: Linger = Linger {
    nap: Duration::from_micros(20),
    naps: 4,
};
/// Receive ring per port: about 1 MiB, room for a burst of ~500 frames
/// while the receive thread is not scheduled.
const RING: RingGeometry = RingGeometry {
    max_frame: MAX_FRAME,
    frames: 480,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// A TPACKET_V2 receive ring, sendmmsg batches to transmit.
    Ring,
    /// recvmmsg/sendmmsg batches on an AF_PACKET socket.
    Mmsg,
    /// pnet's datalink channel, one frame per system call pair.
    Pnet,
}

pub trait FrameRx: Send {
    /// Receives up to `bufs.len()` frames; 0 after a quiet timeout.
    fn recv(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize>;
}

/// Shared by every thread that transmits on the port (its transmit thread
/// and, for frames forwarded run-to-completion, each receive thread).
pub trait FrameTx: Send + Sync {
    /// Sends every frame of `frames`.
    fn send(&self, frames: &[&[u8]]) -> io::Result<()>;
}

fn ifindex(name: &str) -> io::Result<pnet_datalink::NetworkInterface> {
    pnet_datalink::interfaces()
        .into_iter()
        .find(|i| i.name == name)
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no interface {name}")))
}

/// Every port's socket: all protocols, without what the host itself sends.
const PORT_SOCKET: Options = Options {
    receive: true,
    ignore_outgoing: true,
    qdisc_bypass: false,
    recv_timeout: Some(RECV_TIMEOUT),
    buffer_bytes: Some(SOCKET_BUFFER),
};

/// The ring backend's sender: it joins no receive path, so the kernel
/// never queues arrivals to it.
const TX_SOCKET: Options = Options {
    receive: false,
    ignore_outgoing: false,
    qdisc_bypass: false,
    recv_timeout: None,
    buffer_bytes: Some(SOCKET_BUFFER),
};

/// Opens interface `name` with `backend`: a receiver and a sender.
pub fn open(name: &str, backend: Backend) -> io::Result<(Box<dyn FrameRx>, Box<dyn FrameTx>)> {
    let iface = ifindex(name)?;
    match backend {
        Backend::Ring => {
            let mut ring = RxRing::open(iface.index, &PORT_SOCKET, true, RING)?;
            ring.set_linger(Some(LINGER));
            let tx = PacketSocket::open(iface.index, &TX_SOCKET, false)?;
            Ok((
                Box::new(RingRx { ring }),
                Box::new(MmsgTx { sock: tx.into() }),
            ))
        }
        Backend::Mmsg => {
            let sock = Arc::new(PacketSocket::open(iface.index, &PORT_SOCKET, true)?);
            Ok((
                Box::new(MmsgRx {
                    sock: sock.clone(),
                    lens: [None; BATCH],
                }),
                Box::new(MmsgTx { sock }),
            ))
        }
        Backend::Pnet => {
            let config = pnet_datalink::Config {
                read_buffer_size: MAX_FRAME,
                write_buffer_size: MAX_FRAME,
                read_timeout: Some(RECV_TIMEOUT),
                promiscuous: true,
                // pnet binds and owns the socket from here on.
                socket_fd: Some(std::os::fd::IntoRawFd::into_raw_fd(PacketSocket::new(
                    &PORT_SOCKET,
                )?)),
                ..Default::default()
            };
            match pnet_datalink::channel(&iface, config)? {
                pnet_datalink::Channel::Ethernet(tx, rx) => {
                    Ok((Box::new(PnetRx(rx)), Box::new(PnetTx(Mutex::new(tx)))))
                }
                _ => Err(io::Error::other("pnet: not an Ethernet channel")),
            }
        }
    }
}

struct MmsgRx {
    sock: Arc<PacketSocket>,
    lens: [Option<usize>; BATCH],
}

struct MmsgTx {
    sock: Arc<PacketSocket>,
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
        let got = self
            .sock
            .recv_batch(&mut bufs[..n], PacketBuf::receive_area, &mut self.lens)?;
        let mut kept = 0;
        for i in 0..got {
            // A frame longer than the buffer was cut: drop it.
            let Some(len) = self.lens[i] else { continue };
            if kept != i {
                bufs.swap(kept, i);
            }
            bufs[kept].set_received(len);
            kept += 1;
        }
        Ok(kept)
    }
}

impl FrameTx for MmsgTx {
    fn send(&self, frames: &[&[u8]]) -> io::Result<()> {
        self.sock.send_all(frames)
    }
}

struct RingRx {
    ring: RxRing,
}

impl FrameRx for RingRx {
    fn recv(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        let mut n = 0;
        self.ring.recv(bufs.len(), RING_TIMEOUT, |frame| {
            // A frame longer than the buffers was cut: drop it, as mmsg does.
            if let Ok(frame) = frame {
                if bufs[n].load(frame).is_ok() {
                    n += 1;
                }
            }
        })?;
        Ok(n)
    }
}

struct PnetRx(Box<dyn pnet_datalink::DataLinkReceiver>);
struct PnetTx(Mutex<Box<dyn pnet_datalink::DataLinkSender>>);

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
    fn send(&self, frames: &[&[u8]]) -> io::Result<()> {
        let mut tx = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for f in frames {
            tx.send_to(f, None)
                .unwrap_or_else(|| Err(io::Error::other("pnet: frame too large")))?;
        }
        Ok(())
    }
}
