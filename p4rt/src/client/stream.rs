//! The stream channel: arbitration state and packet-in/packet-out.

use super::{from_uint128, to_uint128, Client, ClientConfig, ClientError, Target};
use crate::bytes;
use crate::proto::p4::v1 as p4;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// A packet the device sent to the controller, metadata by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedPacket {
    pub payload: Vec<u8>,
    /// `packet_in` header fields, e.g. `("ingress_port", 3)`.
    pub metadata: Vec<(String, u128)>,
}

impl ReceivedPacket {
    pub fn field(&self, name: &str) -> Option<u128> {
        self.metadata
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }
}

/// What the client knows of arbitration, as the device last said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arbitration {
    Pending,
    Primary,
    /// Another controller (or a stale session of ours) is primary.
    Backup {
        primary: u128,
    },
    /// The stream channel ended.
    Closed,
    /// No stream channel was opened ([`Client::connect_reader`]).
    Unarbitrated,
}

/// The client's first message on the stream channel.
pub(super) fn arbitration_request(config: &ClientConfig) -> p4::StreamMessageRequest {
    let update = p4::MasterArbitrationUpdate {
        device_id: config.target.device_id,
        role: (!config.role.is_empty()).then(|| p4::Role {
            name: config.role.clone(),
            ..Default::default()
        }),
        election_id: Some(to_uint128(config.election_id)),
        status: None,
    };
    p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Arbitration(update)),
    }
}

impl Client {
    /// Sends a packet-out; `metadata` names `packet_out` header fields
    /// (missing ones are zero).
    pub async fn packet_out(
        &self,
        payload: Vec<u8>,
        metadata: &[(&str, u128)],
    ) -> Result<(), ClientError> {
        let header = self.resolve(|ix| ix.packet_metadata("packet_out").cloned())?;
        for (name, _) in metadata {
            self.resolve(|_| header.field(name).map(|_| ()))?;
        }
        let metadata = header
            .metadata
            .iter()
            .map(|m| {
                let v = metadata
                    .iter()
                    .find(|(n, _)| *n == m.name)
                    .map_or(0, |&(_, v)| v);
                let value =
                    bytes::encode_uint(v, m.bitwidth).map_err(|source| ClientError::Value {
                        target: self.config.target.clone(),
                        what: format!("packet_out field {}", m.name),
                        cause: Box::new(source),
                    })?;
                Ok(p4::PacketMetadata {
                    metadata_id: m.id,
                    value,
                })
            })
            .collect::<Result<_, ClientError>>()?;
        self.stream_tx
            .send(p4::StreamMessageRequest {
                update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
                    payload,
                    metadata,
                })),
            })
            .await
            .map_err(|_| self.closed())
    }

    /// The next packet-in, waiting at most `timeout`; None on timeout.
    pub async fn next_packet_in(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<ReceivedPacket>, ClientError> {
        let header = self.resolve(|ix| ix.packet_metadata("packet_in").cloned())?;
        let closed = self.closed();
        let packets = self.packets.as_mut().ok_or(closed)?;
        let packet = match tokio::time::timeout(timeout, packets.recv()).await {
            Err(_) => return Ok(None),
            Ok(None) => return Err(self.closed()),
            Ok(Some(p)) => p,
        };
        let metadata = packet
            .metadata
            .iter()
            .map(|m| {
                let name = header
                    .metadata
                    .iter()
                    .find(|f| f.id == m.metadata_id)
                    .map_or_else(|| format!("#{}", m.metadata_id), |f| f.name.clone());
                (name, bytes::decode_uint(&m.value).unwrap_or(0))
            })
            .collect();
        Ok(Some(ReceivedPacket {
            payload: packet.payload,
            metadata,
        }))
    }
}

/// Reads the stream channel until it ends: arbitration answers update the
/// state, packet-ins are queued (dropped with a warning when nobody reads).
pub(super) async fn read_stream(
    mut responses: tonic::Streaming<p4::StreamMessageResponse>,
    ours: u128,
    target: Target,
    arbitration: watch::Sender<Arbitration>,
    packets: mpsc::Sender<p4::PacketIn>,
    ended: Arc<OnceLock<tonic::Status>>,
) {
    use p4::stream_message_response::Update;
    loop {
        match responses.message().await {
            Ok(Some(msg)) => match msg.update {
                Some(Update::Arbitration(a)) => {
                    let primary = from_uint128(a.election_id.as_ref());
                    let ok = a.status.as_ref().is_none_or(|s| s.code == 0);
                    let state = if ok && primary == ours {
                        Arbitration::Primary
                    } else {
                        Arbitration::Backup { primary }
                    };
                    tracing::debug!(%target, ?state, "arbitration");
                    arbitration.send_replace(state);
                }
                Some(Update::Packet(p)) => {
                    let _ = packets.try_send(p).inspect_err(|_| {
                        tracing::warn!(%target, "packet-in dropped: queue full");
                    });
                }
                Some(Update::Error(e)) => {
                    tracing::warn!(%target, code = e.canonical_code, message = %e.message, "stream error");
                }
                _ => {}
            },
            Ok(None) => break,
            Err(status) => {
                tracing::debug!(%target, %status, "stream channel ended");
                let _ = ended.set(status);
                break;
            }
        }
    }
    arbitration.send_replace(Arbitration::Closed);
}
