//! Injection through the controller: each frame becomes a P4Runtime
//! packet-out with `egress_port = 0`, which tells the switch to run its
//! ingress pipeline on it as if it had arrived on a port. That is how a
//! switch with no host attached becomes a probe generator.

use super::{OpenError, Transport};
use intpath_p4rt::client::{Client, ClientConfig, ClientError};
use intpath_p4rt::p4info::P4InfoIndex;
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// The `packet_out` header field (agreed in the P4 program) and the value
/// that means "run the pipeline".
const EGRESS_PORT: (&str, u128) = ("egress_port", 0);

/// How long [`PacketOut::finish`] waits for queued packet-outs to drain.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(3);

/// A P4Runtime session with one switch, used only to send packet-outs.
pub struct PacketOut {
    /// One worker keeps the gRPC stream moving while the send loop sleeps
    /// or spins on the calling thread.
    rt: tokio::runtime::Runtime,
    /// None once finished.
    client: Option<Client>,
}

impl std::fmt::Debug for PacketOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.client {
            Some(c) => write!(f, "PacketOut({})", c.target()),
            None => f.write_str("PacketOut(finished)"),
        }
    }
}

impl PacketOut {
    /// Connects as primary (the device accepts packet-outs only from its
    /// primary) and takes the P4Info from the switch, so that no P4Info file
    /// is needed here.
    pub fn connect(config: ClientConfig) -> Result<Self, OpenError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(OpenError::Runtime)?;
        let client = rt.block_on(async {
            let mut client = connect_primary(config).await?;
            let Some((p4info, _cookie)) = client.get_pipeline().await? else {
                return Err(ClientError::NoPipeline {
                    target: client.target().clone(),
                });
            };
            let index = P4InfoIndex::new(p4info).map_err(|e| ClientError::P4Info {
                target: client.target().clone(),
                cause: Box::new(e),
            })?;
            client.use_p4info(Arc::new(index));
            Ok(client)
        });
        Ok(Self {
            client: Some(client.map_err(|e| OpenError::Switch(Box::new(e)))?),
            rt,
        })
    }
}

/// How long a sender waits for a controller's sync to end: the controller
/// (higher election id, see `intpath_core::sessions`) holds the switch only
/// while it writes.
const PRIMARY_WAIT: Duration = Duration::from_secs(5);

/// Connects as primary, waiting out a controller that holds the switch for
/// a moment.
async fn connect_primary(config: ClientConfig) -> Result<Client, ClientError> {
    let deadline = tokio::time::Instant::now() + PRIMARY_WAIT;
    loop {
        match Client::connect(config.clone()).await {
            Err(ClientError::NotPrimary { .. }) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => return other,
        }
    }
}

impl Transport for PacketOut {
    fn send_batch(&mut self, frames: &[&[u8]]) -> io::Result<usize> {
        let Some(client) = &self.client else {
            return Err(io::Error::other("packet-out session already finished"));
        };
        self.rt.block_on(async {
            for (i, f) in frames.iter().enumerate() {
                if let Err(e) = client.packet_out(f.to_vec(), &[EGRESS_PORT]).await {
                    return if i == 0 {
                        Err(io::Error::other(e))
                    } else {
                        Ok(i)
                    };
                }
            }
            Ok(frames.len())
        })
    }

    /// `Client::packet_out` returns once the message is queued for the
    /// stream, so exiting right after the last one would lose the tail.
    /// Dropping the client closes the stream; the gRPC tasks end once the
    /// queue is written and the switch has closed its side, which is what
    /// this waits for.
    fn finish(&mut self) -> io::Result<()> {
        let Some(client) = self.client.take() else {
            return Ok(());
        };
        drop(client);
        let metrics = self.rt.metrics();
        self.rt.block_on(async {
            tokio::time::timeout(DRAIN_TIMEOUT, async {
                while metrics.num_alive_tasks() > 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
            .await
            .map_err(|_| {
                io::Error::other(format!(
                    "the switch did not close the stream within {DRAIN_TIMEOUT:?}; \
                     the last packet-outs may not have reached it"
                ))
            })
        })
    }
}
