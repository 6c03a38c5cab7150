//! pnet's datalink channel: the portable way, one frame per call.
//!
//! Kept next to [`super::AfPacket`] so the benchmark can show what each
//! gives, and as a fallback should the batched socket misbehave somewhere.

use super::{Interface, OpenError, Transport};
use pnet_datalink::{Channel, Config, DataLinkSender};
use std::io;

pub struct PnetChannel {
    tx: Box<dyn DataLinkSender>,
}

impl std::fmt::Debug for PnetChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PnetChannel")
    }
}

impl PnetChannel {
    pub fn open(iface: &Interface) -> Result<Self, OpenError> {
        let err = |source| OpenError::Socket {
            name: iface.name.clone(),
            cause: source,
        };
        let all = pnet_datalink::interfaces();
        let Some(ni) = all.into_iter().find(|i| i.index == iface.index) else {
            return Err(err(io::Error::other("interface vanished")));
        };
        let config = Config {
            promiscuous: false,
            ..Config::default()
        };
        match pnet_datalink::channel(&ni, config) {
            // The receiver is dropped: the socket stays open for sending.
            Ok(Channel::Ethernet(tx, _rx)) => Ok(Self { tx }),
            Ok(_) => Err(err(io::Error::other("not an Ethernet channel"))),
            Err(e) => Err(err(e)),
        }
    }
}

impl Transport for PnetChannel {
    fn send_batch(&mut self, frames: &[&[u8]]) -> io::Result<usize> {
        let Some(first) = frames.first() else {
            return Ok(0);
        };
        match self.tx.send_to(first, None) {
            Some(Ok(())) => Ok(1),
            Some(Err(e)) => Err(e),
            None => Err(io::Error::other("pnet: frame does not fit its buffer")),
        }
    }
}
