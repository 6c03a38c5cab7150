//! The `P4Runtime` gRPC trait on [`Handle`]: Write, Read, the forwarding
//! pipeline config (Set / Get), the stream channel and capabilities.

use super::{lock, BoxStream, Client, Config, Handle, API_VERSION, STREAM_BACKLOG};
use crate::p4info_map;
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::p4::v1 as p4;
use p4::p4_runtime_server::P4Runtime;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_stream::{wrappers::ReceiverStream, StreamExt};
use tonic::{Request, Response, Status};

#[tonic::async_trait]
impl P4Runtime for Handle {
    async fn write(
        &self,
        request: Request<p4::WriteRequest>,
    ) -> Result<Response<p4::WriteResponse>, Status> {
        let peer = request.remote_addr();
        let req = request.into_inner();
        self.check_device(req.device_id)?;
        self.check_primary(&req.election_id, peer)?;
        self.write_batch(&req)?;
        Ok(Response::new(p4::WriteResponse {}))
    }

    type ReadStream = BoxStream<p4::ReadResponse>;

    async fn read(
        &self,
        request: Request<p4::ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        let req = request.into_inner();
        self.check_device(req.device_id)?;
        let responses = self.read_cursor(&req.entities)?;
        Ok(Response::new(Box::pin(tokio_stream::iter(responses))))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        request: Request<p4::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::SetForwardingPipelineConfigResponse>, Status> {
        use p4::set_forwarding_pipeline_config_request::Action;
        let peer = request.remote_addr();
        let req = request.into_inner();
        self.check_device(req.device_id)?;
        self.check_primary(&req.election_id, peer)?;
        let action = Action::try_from(req.action).unwrap_or(Action::Unspecified);
        if action == Action::Commit {
            let saved = lock(&self.saved).take().ok_or_else(|| {
                Status::failed_precondition("COMMIT without a config saved by VERIFY_AND_SAVE")
            })?;
            *self.config.write().unwrap_or_else(|p| p.into_inner()) = saved;
            self.core.reset_tables();
            return Ok(Response::new(p4::SetForwardingPipelineConfigResponse {}));
        }
        let config = req
            .config
            .ok_or_else(|| Status::invalid_argument("no forwarding pipeline config"))?;
        let info = config
            .p4info
            .ok_or_else(|| Status::invalid_argument("the config has no P4Info"))?;
        let index = P4InfoIndex::new(info).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let bad = p4info_map::mismatches(&index);
        if !bad.is_empty() {
            return Err(Status::invalid_argument(format!(
                "P4Info does not match this switch's pipeline (sr_int.p4): {}",
                bad.join("; ")
            )));
        }
        if !config.p4_device_config.is_empty()
            && serde_json::from_slice::<serde::de::IgnoredAny>(&config.p4_device_config).is_err()
        {
            return Err(Status::invalid_argument(
                "p4_device_config is not a bmv2 JSON document",
            ));
        }
        let new = Config {
            index: Arc::new(index),
            device_config: config.p4_device_config,
            cookie: config.cookie.map(|c| c.cookie),
        };
        match action {
            Action::Verify => {}
            Action::VerifyAndSave => *lock(&self.saved) = Some(new),
            Action::VerifyAndCommit | Action::ReconcileAndCommit => {
                *self.config.write().unwrap_or_else(|p| p.into_inner()) = new;
                // The program is the same; a fresh commit starts from empty
                // tables as on bmv2, a reconcile keeps them.
                if action == Action::VerifyAndCommit {
                    self.core.reset_tables();
                }
            }
            Action::Unspecified | Action::Commit => {
                return Err(Status::invalid_argument(
                    "pipeline config action unspecified",
                ))
            }
        }
        Ok(Response::new(p4::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        request: Request<p4::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::GetForwardingPipelineConfigResponse>, Status> {
        use p4::get_forwarding_pipeline_config_request::ResponseType;
        let req = request.into_inner();
        self.check_device(req.device_id)?;
        let c = self.config.read().unwrap_or_else(|p| p.into_inner());
        let kind = ResponseType::try_from(req.response_type).unwrap_or(ResponseType::All);
        let with_p4info = matches!(kind, ResponseType::All | ResponseType::P4infoAndCookie);
        let with_device = matches!(
            kind,
            ResponseType::All | ResponseType::DeviceConfigAndCookie
        );
        let config = p4::ForwardingPipelineConfig {
            p4info: with_p4info.then(|| c.index.p4info().clone()),
            p4_device_config: if with_device {
                c.device_config.clone()
            } else {
                Vec::new()
            },
            cookie: c
                .cookie
                .map(|cookie| p4::forwarding_pipeline_config::Cookie { cookie }),
        };
        Ok(Response::new(p4::GetForwardingPipelineConfigResponse {
            config: Some(config),
        }))
    }

    type StreamChannelStream = BoxStream<p4::StreamMessageResponse>;

    async fn stream_channel(
        &self,
        request: Request<tonic::Streaming<p4::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let peer = request.remote_addr();
        let mut inbound = request.into_inner();
        // Like PI on gRPC C-core: nothing (not even response headers) goes
        // out before the client's arbitration, so clients that wait for the
        // switch to speak first fail here as they would on bmv2.
        let first = inbound
            .message()
            .await?
            .ok_or_else(|| Status::cancelled("stream closed before arbitration"))?;
        if !matches!(
            first.update,
            Some(p4::stream_message_request::Update::Arbitration(_))
        ) {
            return Err(Status::failed_precondition(
                "the first stream message must be a MasterArbitrationUpdate",
            ));
        }
        let mut inbound = tokio_stream::once(Ok(first)).chain(inbound);
        let (tx, rx) = mpsc::channel(STREAM_BACKLOG);
        let id = {
            let mut streams = lock(&self.streams);
            streams.next_id += 1;
            let id = streams.next_id;
            streams.clients.insert(
                id,
                Client {
                    election_id: None,
                    peer,
                    tx: tx.clone(),
                },
            );
            id
        };
        let service = self.0.clone();
        tokio::spawn(async move {
            while let Some(msg) = inbound.next().await {
                let Ok(msg) = msg else { break };
                match msg.update {
                    Some(p4::stream_message_request::Update::Arbitration(a)) => {
                        if let Err(status) = service.arbitrate(id, a) {
                            let _ = tx.send(Err(status)).await;
                            break;
                        }
                    }
                    Some(p4::stream_message_request::Update::Packet(p)) => {
                        service.packet_out(id, p)
                    }
                    _ => tracing::debug!("stream message ignored"),
                }
            }
            service.close_stream(id);
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn capabilities(
        &self,
        _request: Request<p4::CapabilitiesRequest>,
    ) -> Result<Response<p4::CapabilitiesResponse>, Status> {
        Ok(Response::new(p4::CapabilitiesResponse {
            p4runtime_api_version: API_VERSION.into(),
            experimental: None,
        }))
    }
}
