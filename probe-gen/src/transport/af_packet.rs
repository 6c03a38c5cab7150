//! A transmit-only `AF_PACKET` socket that sends a whole batch per
//! `sendmmsg(2)` call (the socket itself is `intpath-rawsock`'s, shared with
//! the switch).
//!
//! pnet's datalink sender costs a `poll` and a `sendto` per frame; at the
//! rates the benchmark asks for, system call entry dominates, so this
//! transport amortises it over up to [`AfPacket::MAX_BATCH`] frames. The
//! socket registers no receive hook: the kernel never queues incoming
//! traffic to it, which a receiving socket on a busy link would pay for.

use super::{Interface, OpenError, Transport};
use intpath_rawsock::{Options, PacketSocket};
use std::io;

/// Transmit-only packet socket bound to one interface.
#[derive(Debug)]
pub struct AfPacket {
    sock: PacketSocket,
}

impl AfPacket {
    /// Most frames one `sendmmsg` call carries.
    pub const MAX_BATCH: usize = intpath_rawsock::MAX_BATCH;

    /// Opens the socket on `iface`. With `qdisc_bypass` frames skip the
    /// interface's traffic-control queue (faster, but also skips shaping such
    /// as Mininet's `TCLink` bandwidth and delay emulation).
    pub fn open(iface: &Interface, qdisc_bypass: bool) -> Result<Self, OpenError> {
        let opts = Options {
            qdisc_bypass,
            ..Options::default()
        };
        let sock =
            PacketSocket::open(iface.index, &opts, false).map_err(|source| OpenError::Socket {
                name: iface.name.clone(),
                cause: source,
            })?;
        Ok(Self { sock })
    }
}

impl Transport for AfPacket {
    fn send_batch(&mut self, frames: &[&[u8]]) -> io::Result<usize> {
        self.sock.send_batch(frames)
    }
}
