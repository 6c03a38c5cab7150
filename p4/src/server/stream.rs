//! Packet-out from the primary controller to the switch, and packet-in from
//! the CPU port to the primary controller.

use super::{lock, Service};
use crate::p4info_map;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema;

impl Service {
    pub(super) fn packet_out(&self, stream: u64, out: p4::PacketOut) {
        if lock(&self.streams).primary().map(|(s, _)| s) != Some(stream) {
            tracing::debug!("packet-out from a backup controller ignored");
            return;
        }
        let index = self.index();
        let port_id = p4info_map::metadata_id(&index, schema::PACKET_OUT, "egress_port");
        let port = out
            .metadata
            .iter()
            .find(|m| Some(m.metadata_id) == port_id)
            .map_or(0, |m| {
                m.value
                    .iter()
                    .fold(0u32, |acc, b| (acc << 8) | u32::from(*b))
            });
        let mut frame = Vec::with_capacity(out.payload.len() + 4);
        frame.extend_from_slice(&(port as u16).to_be_bytes());
        frame.extend_from_slice(&[0, 0]);
        frame.extend_from_slice(&out.payload);
        if let Err(e) = self.core.packet_out(&frame) {
            tracing::warn!("packet-out dropped: {e}");
        }
    }

    /// Hands a frame from the CPU port to the primary controller.
    pub(super) fn packet_in(&self, frame: &[u8]) {
        let Some((header, payload)) = frame.split_at_checked(4) else {
            return;
        };
        let index = self.index();
        let mut metadata = Vec::new();
        for (name, value) in [("ingress_port", &header[..2]), ("_pad", &header[2..])] {
            if let Some(id) = p4info_map::metadata_id(&index, schema::PACKET_IN, name) {
                metadata.push(p4::PacketMetadata {
                    metadata_id: id,
                    value: intpath_p4rt::bytes::canonical(value, 16)
                        .unwrap_or_else(|_| value.to_vec()),
                });
            }
        }
        let msg = p4::StreamMessageResponse {
            update: Some(p4::stream_message_response::Update::Packet(p4::PacketIn {
                payload: payload.to_vec(),
                metadata,
            })),
        };
        let streams = lock(&self.streams);
        if let Some(c) = streams.primary().and_then(|(s, _)| streams.clients.get(&s)) {
            if c.tx.try_send(Ok(msg)).is_err() {
                tracing::debug!("packet-in dropped: controller is not reading");
            }
        }
    }
}
