//! How the client reports trouble: an unreachable switch, a switch that
//! does not answer, a lost arbitration, rejected updates. A small in-test
//! P4Runtime server plays the misbehaving device over real gRPC; the
//! behaviour against the real reference switch is in controller/tests.

use intpath_p4rt::client::{self, Client, ClientConfig, ClientError, Target};
use intpath_p4rt::p4info::{self, Match, P4InfoIndex};
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::v1::{self as p4, p4_runtime_server as srv};
use prost::Message;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tonic::{Request, Response, Status, Streaming};

/// Answers arbitration with a fixed primary election id and rejects every
/// second update of a write, the way a P4Runtime device reports per-update
/// errors.
struct Device {
    primary_election_id: u128,
}

type Stream<T> = ReceiverStream<Result<T, Status>>;

#[tonic::async_trait]
impl srv::P4Runtime for Device {
    async fn write(
        &self,
        r: Request<p4::WriteRequest>,
    ) -> Result<Response<p4::WriteResponse>, Status> {
        let errors: Vec<prost_types::Any> = r
            .into_inner()
            .updates
            .iter()
            .enumerate()
            .map(|(i, _)| {
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
            details: errors,
        };
        Err(Status::with_details(
            tonic::Code::Unknown,
            "batch had errors",
            status.encode_to_vec().into(),
        ))
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
        _: Request<p4::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::SetForwardingPipelineConfigResponse>, Status> {
        Ok(Response::new(p4::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        _: Request<p4::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::GetForwardingPipelineConfigResponse>, Status> {
        Err(Status::failed_precondition("no pipeline"))
    }

    type StreamChannelStream = Stream<p4::StreamMessageResponse>;
    async fn stream_channel(
        &self,
        r: Request<Streaming<p4::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let mut incoming = r.into_inner();
        let (tx, rx) = mpsc::channel(8);
        let primary = self.primary_election_id;
        tokio::spawn(async move {
            while let Ok(Some(msg)) = incoming.message().await {
                if let Some(p4::stream_message_request::Update::Arbitration(a)) = msg.update {
                    let ours = client::from_uint128(a.election_id.as_ref());
                    let code = if ours == primary {
                        tonic::Code::Ok
                    } else {
                        tonic::Code::AlreadyExists
                    };
                    let reply = p4::MasterArbitrationUpdate {
                        election_id: Some(client::to_uint128(primary)),
                        status: Some(rpc::Status {
                            code: code as i32,
                            ..Default::default()
                        }),
                        ..a
                    };
                    let update = p4::stream_message_response::Update::Arbitration(reply);
                    if tx
                        .send(Ok(p4::StreamMessageResponse {
                            update: Some(update),
                        }))
                        .await
                        .is_err()
                    {
                        break;
                    }
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

async fn serve(device: Device) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(srv::P4RuntimeServer::new(device))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    addr
}

fn config(addr: &str, election_id: u128) -> ClientConfig {
    let mut c = ClientConfig::new(Target {
        name: "s7".into(),
        addr: addr.into(),
        device_id: 7,
    });
    c.election_id = election_id;
    c.connect_timeout = Duration::from_millis(500);
    c.rpc_timeout = Duration::from_millis(500);
    c
}

fn index() -> Arc<P4InfoIndex> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/sr_int.p4info.txtpb");
    Arc::new(P4InfoIndex::new(p4info::load(&path).unwrap()).unwrap())
}

#[tokio::test]
async fn unreachable_switch_names_switch_and_address() {
    // A port that was just free: nothing listens there.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let e = Client::connect(config(&addr, 1)).await.err().unwrap();
    let text = e.to_string();
    assert!(matches!(e, ClientError::Connect { .. }), "{text}");
    assert!(text.contains("switch s7") && text.contains(&addr), "{text}");
    assert!(text.contains("refused"), "{text}");
}

#[tokio::test]
async fn silent_switch_times_out() {
    // Accepts TCP, never speaks HTTP/2.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let start = Instant::now();
    let e = Client::connect(config(&addr, 1)).await.err().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    let text = e.to_string();
    assert!(
        matches!(e, ClientError::Timeout { .. } | ClientError::Connect { .. }),
        "{text}"
    );
    assert!(text.contains(&addr), "{text}");
}

#[tokio::test]
async fn lost_arbitration_is_not_primary() {
    let addr = serve(Device {
        primary_election_id: 5,
    })
    .await;
    let e = Client::connect(config(&addr, 1)).await.err().unwrap();
    match &e {
        ClientError::NotPrimary { primary, ours, .. } => {
            assert_eq!((*primary, *ours), (5, 1));
        }
        other => panic!("expected NotPrimary, got {other}"),
    }
    assert!(e.to_string().contains("not primary"), "{e}");
    // An observer may stay connected as a backup.
    let c = Client::connect_observer(config(&addr, 1)).await.unwrap();
    assert_eq!(c.arbitration(), client::Arbitration::Backup { primary: 5 });
    // The rightful primary wins.
    let c = Client::connect(config(&addr, 5)).await.unwrap();
    assert!(c.is_primary());
    assert_eq!(c.capabilities().await.unwrap(), "1.4.0");
}

#[tokio::test]
async fn rejected_updates_are_named_with_the_switch_message() {
    let addr = serve(Device {
        primary_election_id: 1,
    })
    .await;
    let mut c = Client::connect(config(&addr, 1)).await.unwrap();
    let ix = index();
    c.set_pipeline(ix.clone(), b"{}".to_vec(), 1).await.unwrap();
    let updates: Vec<p4::Update> = (0..5u8)
        .map(|i| {
            let e = ix
                .table_entry(
                    "SrIntIngress.ipv4_lpm",
                    &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 0, i], 32))],
                    "SrIntIngress.ipv4_forward",
                    &[("dst_mac", &[1][..]), ("port", &[i][..])],
                )
                .unwrap();
            client::update(p4::update::Type::Insert, p4::entity::Entity::TableEntry(e))
        })
        .collect();
    let e = c.write(updates).await.err().unwrap();
    let ClientError::Write {
        total, failures, ..
    } = &e
    else {
        panic!("expected Write error, got {e}");
    };
    assert_eq!(*total, 5);
    assert_eq!(
        failures.iter().map(|f| f.index).collect::<Vec<_>>(),
        vec![1, 3]
    );
    let text = e.to_string();
    assert!(text.contains("2 of 5 updates rejected"), "{text}");
    assert!(
        text.contains(
            "update 3 (INSERT SrIntIngress.ipv4_lpm hdr.ipv4.dst_addr=0x0a000003/32 -> \
             SrIntIngress.ipv4_forward(dst_mac=0x01, port=0x03)): InvalidArgument: entry 3 is not welcome here"
        ),
        "{text}"
    );
}
