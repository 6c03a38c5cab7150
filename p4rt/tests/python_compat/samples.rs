//! The samples that cross to Python and back: each message encoded by us,
//! with the check that Python's re-encoding decodes to the same value.

use crate::messages::*;
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::v1::{self as p4, *};
use prost::Message;

pub type Check = Box<dyn Fn(&[u8]) -> Result<(), String>>;

pub struct Sample {
    pub name: &'static str,
    pub type_name: &'static str,
    pub bytes: Vec<u8>,
    /// Decodes Python's re-encoding and compares it with the original.
    pub check: Check,
}

pub fn sample<M>(name: &'static str, type_name: &'static str, msg: M) -> Sample
where
    M: Message + Default + PartialEq + std::fmt::Debug + 'static,
{
    let bytes = msg.encode_to_vec();
    Sample {
        name,
        type_name,
        bytes,
        check: Box::new(move |python: &[u8]| {
            let back = M::decode(python).map_err(|e| format!("cannot decode: {e}"))?;
            if back == msg {
                Ok(())
            } else {
                Err(format!("differs:\nours   {msg:?}\npython {back:?}"))
            }
        }),
    }
}

pub fn samples() -> Vec<Sample> {
    let info = p4info_sample();
    let pipeline = ForwardingPipelineConfig {
        p4info: Some(info.clone()),
        p4_device_config: br#"{"program": "l3_forward.p4"}"#.to_vec(),
        cookie: Some(forwarding_pipeline_config::Cookie { cookie: 42 }),
    };
    let packet_out = PacketOut {
        payload: vec![0xde, 0xad],
        metadata: vec![PacketMetadata {
            metadata_id: 1,
            value: vec![0],
        }],
    };
    let error = p4::Error {
        canonical_code: rpc::Code::InvalidArgument as i32,
        message: "bad entry".into(),
        space: "targetX-psa-vendor1".into(),
        code: 3,
        details: Some(any("p4.v1.Index", &Index { index: 1 })),
    };
    let arbitration = MasterArbitrationUpdate {
        device_id: 1,
        role: Some(Role {
            name: "intpath".into(),
            config: Some(any("p4.v1.Uint128", &Uint128 { high: 0, low: 1 })),
            ..Default::default()
        }),
        election_id: Some(Uint128 { high: 0, low: 10 }),
        status: Some(rpc::Status {
            code: rpc::Code::AlreadyExists as i32,
            message: "not primary".into(),
            details: vec![],
        }),
    };
    use stream_message_request::Update as Rq;
    use stream_message_response::Update as Rs;
    vec![
        sample("p4info", "p4.config.v1.P4Info", info),
        sample("write_request", "p4.v1.WriteRequest", write_request()),
        sample("write_response", "p4.v1.WriteResponse", WriteResponse {}),
        sample(
            "read_request",
            "p4.v1.ReadRequest",
            ReadRequest {
                device_id: 1,
                role: String::new(),
                entities: vec![
                    entity(entity::Entity::TableEntry(TableEntry {
                        table_id: 33554433,
                        ..Default::default()
                    })),
                    entity(entity::Entity::CounterEntry(CounterEntry {
                        counter_id: 302006272,
                        ..Default::default()
                    })),
                ],
            },
        ),
        sample(
            "read_response",
            "p4.v1.ReadResponse",
            ReadResponse {
                entities: vec![
                    entity(entity::Entity::TableEntry(table_entry())),
                    entity(entity::Entity::DirectCounterEntry(DirectCounterEntry {
                        table_entry: Some(table_entry()),
                        data: Some(CounterData {
                            byte_count: i64::MAX,
                            packet_count: 1,
                        }),
                    })),
                    entity(entity::Entity::DirectMeterEntry(DirectMeterEntry {
                        table_entry: Some(table_entry()),
                        config: Some(MeterConfig::default()),
                        counter_data: Some(MeterCounterData {
                            green: Some(CounterData {
                                byte_count: 1,
                                packet_count: 1,
                            }),
                            yellow: None,
                            red: Some(CounterData {
                                byte_count: 2,
                                packet_count: 2,
                            }),
                        }),
                    })),
                ],
            },
        ),
        sample(
            "stream_arbitration",
            "p4.v1.StreamMessageRequest",
            StreamMessageRequest {
                update: Some(Rq::Arbitration(arbitration.clone())),
            },
        ),
        sample(
            "stream_packet_out",
            "p4.v1.StreamMessageRequest",
            StreamMessageRequest {
                update: Some(Rq::Packet(packet_out.clone())),
            },
        ),
        sample(
            "stream_digest_ack",
            "p4.v1.StreamMessageRequest",
            StreamMessageRequest {
                update: Some(Rq::DigestAck(DigestListAck {
                    digest_id: 1,
                    list_id: 2,
                })),
            },
        ),
        sample(
            "stream_request_other",
            "p4.v1.StreamMessageRequest",
            StreamMessageRequest {
                update: Some(Rq::Other(any("p4.v1.Index", &Index { index: 9 }))),
            },
        ),
        sample(
            "stream_arbitration_reply",
            "p4.v1.StreamMessageResponse",
            StreamMessageResponse {
                update: Some(Rs::Arbitration(arbitration)),
            },
        ),
        sample(
            "stream_packet_in",
            "p4.v1.StreamMessageResponse",
            StreamMessageResponse {
                update: Some(Rs::Packet(PacketIn {
                    payload: vec![1, 2, 3],
                    metadata: vec![PacketMetadata {
                        metadata_id: 1,
                        value: vec![1],
                    }],
                })),
            },
        ),
        sample(
            "stream_digest",
            "p4.v1.StreamMessageResponse",
            StreamMessageResponse {
                update: Some(Rs::Digest(DigestList {
                    digest_id: 1,
                    list_id: 7,
                    data: vec![P4Data {
                        data: Some(p4_data::Data::Bool(true)),
                    }],
                    timestamp: 99,
                })),
            },
        ),
        sample(
            "stream_idle_timeout",
            "p4.v1.StreamMessageResponse",
            StreamMessageResponse {
                update: Some(Rs::IdleTimeoutNotification(IdleTimeoutNotification {
                    table_entry: vec![table_entry()],
                    timestamp: 5,
                })),
            },
        ),
        sample(
            "stream_error",
            "p4.v1.StreamMessageResponse",
            StreamMessageResponse {
                update: Some(Rs::Error(StreamError {
                    canonical_code: rpc::Code::InvalidArgument as i32,
                    message: "bad packet".into(),
                    space: "intpath".into(),
                    code: 1,
                    details: Some(stream_error::Details::PacketOut(PacketOutError {
                        packet_out: Some(packet_out),
                    })),
                })),
            },
        ),
        sample(
            "set_pipeline",
            "p4.v1.SetForwardingPipelineConfigRequest",
            SetForwardingPipelineConfigRequest {
                device_id: 1,
                election_id: Some(Uint128 { high: 0, low: 1 }),
                action: set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
                config: Some(pipeline.clone()),
                ..Default::default()
            },
        ),
        sample(
            "get_pipeline",
            "p4.v1.GetForwardingPipelineConfigRequest",
            GetForwardingPipelineConfigRequest {
                device_id: 1,
                response_type: get_forwarding_pipeline_config_request::ResponseType::CookieOnly
                    as i32,
            },
        ),
        sample(
            "get_pipeline_reply",
            "p4.v1.GetForwardingPipelineConfigResponse",
            GetForwardingPipelineConfigResponse {
                config: Some(pipeline),
            },
        ),
        sample(
            "capabilities",
            "p4.v1.CapabilitiesResponse",
            CapabilitiesResponse {
                p4runtime_api_version: "1.4.0".into(),
                experimental: Some(any("p4.v1.Index", &Index { index: 0 })),
            },
        ),
        sample(
            "write_status",
            "google.rpc.Status",
            rpc::Status {
                code: rpc::Code::Unknown as i32,
                message: "write failed".into(),
                details: vec![
                    any("p4.v1.Error", &p4::Error::default()),
                    any("p4.v1.Error", &error),
                ],
            },
        ),
    ]
}
