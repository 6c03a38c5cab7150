//! Where frames go: out of a local interface, or (for a switch without a
//! host) into a switch through its controller.

mod af_packet;
mod packet_out;
mod pnet;

pub use af_packet::AfPacket;
pub use packet_out::PacketOut;
pub use pnet::PnetChannel;

use intpath_core::wire::MacAddr;
use std::io;
use std::net::Ipv4Addr;

/// Hands frames to the network.
///
/// Batches exist because the per-call cost dominates at high rates: a
/// transport that can send several frames per system call (or RPC) should.
pub trait Transport {
    /// Sends a prefix of `frames`, in order, and returns its length (at least
    /// one frame when `frames` is not empty). An error means `frames[0]` was
    /// refused; the caller counts it lost and goes on with the rest.
    fn send_batch(&mut self, frames: &[&[u8]]) -> io::Result<usize>;

    /// Ends the session, returning once everything accepted so far has left
    /// this process. Transports that hand frames straight to the kernel have
    /// nothing to wait for.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("no network interface named {name:?} (available: {})", available.join(", "))]
    NoSuchInterface {
        name: String,
        available: Vec<String>,
    },
    #[error("{name}: cannot open a packet socket: {cause}")]
    Socket { name: String, cause: io::Error },
    #[error(transparent)]
    Switch(Box<intpath_p4rt::client::ClientError>),
    #[error("cannot start the P4Runtime client's runtime: {0}")]
    Runtime(io::Error),
}

/// What probe-gen needs to know about a local interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub name: String,
    pub index: u32,
    pub mac: Option<MacAddr>,
    /// Its first IPv4 address, the default source of what we send.
    pub ipv4: Option<Ipv4Addr>,
}

impl Interface {
    pub fn find(name: &str) -> Result<Self, OpenError> {
        let all = pnet_datalink::interfaces();
        let Some(i) = all.iter().find(|i| i.name == name) else {
            return Err(OpenError::NoSuchInterface {
                name: name.to_owned(),
                available: all.into_iter().map(|i| i.name).collect(),
            });
        };
        Ok(Self {
            name: i.name.clone(),
            index: i.index,
            mac: i.mac.map(|m| MacAddr(m.octets())),
            ipv4: i.ips.iter().find_map(|ip| match ip.ip() {
                std::net::IpAddr::V4(v4) => Some(v4),
                std::net::IpAddr::V6(_) => None,
            }),
        })
    }
}
