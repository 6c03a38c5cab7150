//! An in-process P4Runtime device over real gRPC, for client behaviour the
//! reference switch cannot be made to show (lost arbitration, per-update
//! errors) and for watching what a client sends (packet-outs). Like a
//! device, it says nothing on the stream channel before the client's
//! arbitration.

use intpath_p4rt::client::{from_uint128, to_uint128};
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::config::v1::P4Info;
use intpath_p4rt::proto::p4::v1::{self as p4, p4_runtime_server as srv};
use prost::Message;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tonic::{Request, Response, Status, Streaming};

/// How the device behaves.
#[derive(Debug, Clone, Default)]
pub struct FakeDevice {
    /// Election ids from this one up win arbitration; a lower one is told
    /// that this id is the primary's.
    pub primary_from: u128,
    /// Rejects every second update of a write (per-update errors, as
    /// P4Runtime reports them); otherwise writes are accepted.
    pub reject_every_second_update: bool,
    /// Starts with sr_int's P4Info loaded (otherwise none until pushed).
    pub sr_int_loaded: bool,
}

/// A serving device: its address and the packet-outs its primary sent.
pub struct Running {
    pub addr: String,
    pub packet_outs: mpsc::UnboundedReceiver<p4::PacketOut>,
}

impl FakeDevice {
    /// Serves on a fresh loopback port from the current tokio runtime.
    pub async fn serve(self) -> Running {
        let (packets, packet_outs) = mpsc::unbounded_channel();
        let pipeline = self.sr_int_loaded.then(|| {
            intpath_sr_int::p4info()
                .expect("built-in P4Info")
                .p4info()
                .clone()
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("bound").to_string();
        let service = Service {
            behaviour: self,
            pipeline: Arc::new(Mutex::new(pipeline)),
            packets,
        };
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(srv::P4RuntimeServer::new(service))
                .serve_with_incoming(TcpListenerStream::new(listener)),
        );
        Running { addr, packet_outs }
    }
}

struct Service {
    behaviour: FakeDevice,
    pipeline: Arc<Mutex<Option<P4Info>>>,
    packets: mpsc::UnboundedSender<p4::PacketOut>,
}

type Stream<T> = ReceiverStream<Result<T, Status>>;

fn batch_errors(updates: usize) -> Status {
    let details = (0..updates)
        .map(|i| {
            let e = if i % 2 == 1 {
                p4::Error {
                    canonical_code: tonic::Code::InvalidArgument as i32,
                    message: format!("entry {i} is not welcome here"),
                    ..Default::default()
                }
            } else {
                p4::Error::default()
            };
            prost_types::Any {
                type_url: "type.googleapis.com/p4.v1.Error".into(),
                value: e.encode_to_vec(),
            }
        })
        .collect();
    let status = rpc::Status {
        code: tonic::Code::Unknown as i32,
        message: "batch had errors".into(),
        details,
    };
    Status::with_details(
        tonic::Code::Unknown,
        "batch had errors",
        status.encode_to_vec().into(),
    )
}

#[tonic::async_trait]
impl srv::P4Runtime for Service {
    async fn write(
        &self,
        r: Request<p4::WriteRequest>,
    ) -> Result<Response<p4::WriteResponse>, Status> {
        if self.behaviour.reject_every_second_update {
            return Err(batch_errors(r.into_inner().updates.len()));
        }
        Ok(Response::new(p4::WriteResponse {}))
    }

    type ReadStream = Stream<p4::ReadResponse>;
    async fn read(
        &self,
        _: Request<p4::ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        Err(Status::unimplemented("read"))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        r: Request<p4::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::SetForwardingPipelineConfigResponse>, Status> {
        let info = r.into_inner().config.and_then(|c| c.p4info);
        *self.pipeline.lock().unwrap_or_else(|p| p.into_inner()) = info;
        Ok(Response::new(p4::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        _: Request<p4::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::GetForwardingPipelineConfigResponse>, Status> {
        let info = self
            .pipeline
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let info = info.ok_or_else(|| Status::failed_precondition("no pipeline"))?;
        Ok(Response::new(p4::GetForwardingPipelineConfigResponse {
            config: Some(p4::ForwardingPipelineConfig {
                p4info: Some(info),
                ..Default::default()
            }),
        }))
    }

    type StreamChannelStream = Stream<p4::StreamMessageResponse>;
    async fn stream_channel(
        &self,
        r: Request<Streaming<p4::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let mut incoming = r.into_inner();
        let (tx, rx) = mpsc::channel(8);
        let min = self.behaviour.primary_from;
        let packets = self.packets.clone();
        tokio::spawn(async move {
            let mut primary = false;
            while let Ok(Some(msg)) = incoming.message().await {
                match msg.update {
                    Some(p4::stream_message_request::Update::Arbitration(a)) => {
                        let ours = from_uint128(a.election_id.as_ref());
                        primary = ours >= min;
                        let code = if primary {
                            tonic::Code::Ok
                        } else {
                            tonic::Code::AlreadyExists
                        };
                        let reply = p4::MasterArbitrationUpdate {
                            election_id: Some(to_uint128(if primary { ours } else { min })),
                            status: Some(rpc::Status {
                                code: code as i32,
                                ..Default::default()
                            }),
                            ..a
                        };
                        let update = p4::stream_message_response::Update::Arbitration(reply);
                        let reply = p4::StreamMessageResponse {
                            update: Some(update),
                        };
                        if tx.send(Ok(reply)).await.is_err() {
                            break;
                        }
                    }
                    // Like a device: packet-outs count only from the primary.
                    Some(p4::stream_message_request::Update::Packet(p)) if primary => {
                        let _ = packets.send(p);
                    }
                    _ => {}
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn capabilities(
        &self,
        _: Request<p4::CapabilitiesRequest>,
    ) -> Result<Response<p4::CapabilitiesResponse>, Status> {
        Ok(Response::new(p4::CapabilitiesResponse {
            p4runtime_api_version: "1.4.0".into(),
            experimental: None,
        }))
    }
}
