//! Controller arbitration: who is primary, telling every stream its role,
//! and forgetting a stream when it closes.

use super::{election, lock, rpc_status, Service, Streams};
use intpath_p4rt::client::to_uint128;
use intpath_p4rt::proto::p4::v1 as p4;
use std::net::SocketAddr;
use tonic::{Code, Status};

impl Service {
    /// Writes and pipeline changes come from the primary controller only,
    /// over the connection that holds its stream: an election id is no
    /// secret, the connection is what makes a client the primary.
    pub(super) fn check_primary(
        &self,
        election_id: &Option<p4::Uint128>,
        peer: Option<SocketAddr>,
    ) -> Result<(), Status> {
        let streams = lock(&self.streams);
        let primary = streams
            .primary()
            .and_then(|(s, e)| Some((e, streams.clients.get(&s)?.peer)));
        match (primary, election(election_id)) {
            (Some((p, at)), Some(e)) if p == e && (at.is_none() || at == peer) => Ok(()),
            (Some((p, _)), Some(e)) if p == e => Err(Status::permission_denied(
                "the primary controller's election id from another connection: \
                 write over the connection that holds the primary's stream channel",
            )),
            (None, _) => Err(Status::permission_denied(
                "no primary controller: open the stream channel and arbitrate first",
            )),
            (Some(_), _) => Err(Status::permission_denied(
                "election id is not the primary controller's",
            )),
        }
    }

    /// Sends every stream its role after the primary may have changed.
    pub(super) fn announce(&self, streams: &Streams) {
        let Some((primary, election_id)) = streams.primary() else {
            return;
        };
        for (id, c) in &streams.clients {
            if c.election_id.is_none() {
                continue;
            }
            let status = if *id == primary {
                rpc_status(Code::Ok, "primary")
            } else {
                rpc_status(Code::AlreadyExists, "backup")
            };
            let msg = p4::StreamMessageResponse {
                update: Some(p4::stream_message_response::Update::Arbitration(
                    p4::MasterArbitrationUpdate {
                        device_id: self.device_id,
                        role: None,
                        election_id: Some(to_uint128(election_id)),
                        status: Some(status),
                    },
                )),
            };
            let _ = c.tx.try_send(Ok(msg));
        }
    }

    pub(super) fn arbitrate(
        &self,
        stream: u64,
        update: p4::MasterArbitrationUpdate,
    ) -> Result<(), Status> {
        self.check_device(update.device_id)?;
        if update.role.as_ref().is_some_and(|r| !r.name.is_empty()) {
            return Err(Status::unimplemented("only the default role exists"));
        }
        let id = election(&update.election_id)
            .ok_or_else(|| Status::invalid_argument("arbitration without an election id"))?;
        let mut streams = lock(&self.streams);
        if streams
            .clients
            .iter()
            .any(|(s, c)| *s != stream && c.election_id == Some(id))
        {
            return Err(Status::invalid_argument(format!(
                "election id {id} is already used by another controller"
            )));
        }
        if let Some(c) = streams.clients.get_mut(&stream) {
            c.election_id = Some(id);
        }
        self.announce(&streams);
        Ok(())
    }

    pub(super) fn close_stream(&self, stream: u64) {
        let mut streams = lock(&self.streams);
        let was_primary = streams.primary().map(|(s, _)| s) == Some(stream);
        streams.clients.remove(&stream);
        if was_primary {
            self.announce(&streams);
        }
    }
}
