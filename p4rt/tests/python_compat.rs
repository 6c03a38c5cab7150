//! Our P4Runtime messages against the official Python bindings
//! (`pip install p4runtime`, done by scripts/install-deps.sh): compat.py
//! compares every descriptor, then samples cross in both directions.

use intpath_p4rt::p4info;
use intpath_p4rt::proto::google::rpc;
use intpath_p4rt::proto::p4::v1::{self as p4, *};
use intpath_p4rt::proto::FILE_DESCRIPTOR_SET;
use prost::Message;
use std::path::{Path, PathBuf};
use std::process::Command;

type Check = Box<dyn Fn(&[u8]) -> Result<(), String>>;

struct Sample {
    name: &'static str,
    type_name: &'static str,
    bytes: Vec<u8>,
    /// Decodes Python's re-encoding and compares it with the original.
    check: Check,
}

fn sample<M>(name: &'static str, type_name: &'static str, msg: M) -> Sample
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

fn any<M: Message>(type_name: &str, msg: &M) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{type_name}"),
        value: msg.encode_to_vec(),
    }
}

fn entity(e: entity::Entity) -> Entity {
    Entity { entity: Some(e) }
}

fn p4info_sample() -> p4info::P4Info {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/all_kinds.p4info.txtpb");
    p4info::load(&path).expect("sample P4Info parses")
}

fn table_entry() -> TableEntry {
    use field_match::*;
    let fm = |id, kind| FieldMatch {
        field_id: id,
        field_match_type: Some(kind),
    };
    TableEntry {
        table_id: 33554433,
        r#match: vec![
            fm(1, FieldMatchType::Exact(Exact { value: vec![7] })),
            fm(
                2,
                FieldMatchType::Lpm(Lpm {
                    value: vec![10, 0, 1, 0],
                    prefix_len: 24,
                }),
            ),
            fm(
                3,
                FieldMatchType::Ternary(Ternary {
                    value: vec![1],
                    mask: vec![0xff],
                }),
            ),
            fm(
                4,
                FieldMatchType::Range(Range {
                    low: vec![1],
                    high: vec![2, 0],
                }),
            ),
            fm(5, FieldMatchType::Optional(Optional { value: vec![1] })),
        ],
        action: Some(TableAction {
            r#type: Some(table_action::Type::Action(Action {
                action_id: 16777217,
                params: vec![action::Param {
                    param_id: 1,
                    value: vec![1, 0xff],
                }],
            })),
        }),
        priority: 10,
        meter_config: Some(MeterConfig {
            cir: 1,
            cburst: 2,
            pir: 3,
            pburst: 4,
            eburst: 5,
        }),
        counter_data: Some(CounterData {
            byte_count: 1500,
            packet_count: 1,
        }),
        idle_timeout_ns: 1_000_000,
        time_since_last_hit: Some(table_entry::IdleTimeout { elapsed_ns: 5 }),
        metadata: b"cookie".to_vec(),
        is_const: true,
        ..Default::default()
    }
}

fn update(kind: update::Type, e: entity::Entity) -> Update {
    Update {
        r#type: kind as i32,
        entity: Some(entity(e)),
    }
}

fn write_request() -> WriteRequest {
    use entity::Entity as E;
    let action = Action {
        action_id: 16777218,
        params: vec![],
    };
    let replica = Replica {
        port_kind: Some(replica::PortKind::Port(vec![0, 1])),
        instance: 1,
        backup_replicas: vec![BackupReplica {
            port: vec![2],
            instance: 2,
        }],
    };
    let updates = vec![
        update(update::Type::Insert, E::TableEntry(table_entry())),
        update(
            update::Type::Modify,
            E::TableEntry(TableEntry {
                table_id: 33554433,
                action: Some(TableAction {
                    r#type: Some(table_action::Type::ActionProfileActionSet(
                        ActionProfileActionSet {
                            action_profile_actions: vec![ActionProfileAction {
                                action: Some(action.clone()),
                                weight: 2,
                                watch_kind: Some(action_profile_action::WatchKind::WatchPort(
                                    vec![3],
                                )),
                            }],
                            action_selection_mode:
                                action_profile_action_set::ActionSelectionMode::Hash as i32,
                            size_semantics: action_profile_action_set::SizeSemantics::SumOfWeights
                                as i32,
                            group_action: Some(action.clone()),
                        },
                    )),
                }),
                ..Default::default()
            }),
        ),
        update(
            update::Type::Delete,
            E::TableEntry(TableEntry {
                table_id: 33554433,
                is_default_action: true,
                ..Default::default()
            }),
        ),
        update(
            update::Type::Insert,
            E::ActionProfileMember(ActionProfileMember {
                action_profile_id: 285212673,
                member_id: 1,
                action: Some(action.clone()),
            }),
        ),
        update(
            update::Type::Insert,
            E::ActionProfileGroup(ActionProfileGroup {
                action_profile_id: 285212673,
                group_id: 1,
                members: vec![action_profile_group::Member {
                    member_id: 1,
                    weight: 1,
                    watch_kind: Some(action_profile_group::member::WatchKind::WatchPort(vec![1])),
                }],
                max_size: 8,
            }),
        ),
        update(
            update::Type::Modify,
            E::CounterEntry(CounterEntry {
                counter_id: 302006272,
                index: Some(Index { index: 3 }),
                data: Some(CounterData {
                    byte_count: 0,
                    packet_count: 0,
                }),
            }),
        ),
        update(
            update::Type::Modify,
            E::MeterEntry(MeterEntry {
                meter_id: 335544321,
                index: Some(Index { index: 1 }),
                config: Some(MeterConfig {
                    cir: 100,
                    cburst: 10,
                    ..Default::default()
                }),
                counter_data: None,
            }),
        ),
        update(
            update::Type::Insert,
            E::PacketReplicationEngineEntry(PacketReplicationEngineEntry {
                r#type: Some(packet_replication_engine_entry::Type::MulticastGroupEntry(
                    MulticastGroupEntry {
                        multicast_group_id: 1,
                        replicas: vec![replica.clone()],
                        metadata: vec![9],
                    },
                )),
            }),
        ),
        update(
            update::Type::Insert,
            E::PacketReplicationEngineEntry(PacketReplicationEngineEntry {
                r#type: Some(packet_replication_engine_entry::Type::CloneSessionEntry(
                    CloneSessionEntry {
                        session_id: 5,
                        replicas: vec![replica],
                        class_of_service: 1,
                        packet_length_bytes: 128,
                    },
                )),
            }),
        ),
        update(
            update::Type::Modify,
            E::ValueSetEntry(ValueSetEntry {
                value_set_id: 50331649,
                members: vec![ValueSetMember {
                    r#match: table_entry().r#match,
                }],
            }),
        ),
        update(
            update::Type::Modify,
            E::RegisterEntry(RegisterEntry {
                register_id: 369098753,
                index: Some(Index { index: 0 }),
                data: Some(P4Data {
                    data: Some(p4_data::Data::Struct(P4StructLike {
                        members: vec![
                            P4Data {
                                data: Some(p4_data::Data::Bitstring(vec![1])),
                            },
                            P4Data {
                                data: Some(p4_data::Data::Header(P4Header {
                                    is_valid: true,
                                    bitstrings: vec![vec![1], vec![2]],
                                })),
                            },
                            P4Data {
                                data: Some(p4_data::Data::Varbit(P4Varbit {
                                    bitstring: vec![1],
                                    bitwidth: 12,
                                })),
                            },
                            P4Data {
                                data: Some(p4_data::Data::Enum("RED".into())),
                            },
                        ],
                    })),
                }),
            }),
        ),
        update(
            update::Type::Insert,
            E::DigestEntry(DigestEntry {
                digest_id: 385875969,
                config: Some(digest_entry::Config {
                    max_timeout_ns: 1,
                    max_list_size: 2,
                    ack_timeout_ns: 3,
                }),
            }),
        ),
        update(
            update::Type::Insert,
            E::ExternEntry(ExternEntry {
                extern_type_id: 129,
                extern_id: 1,
                entry: Some(any("p4.v1.Index", &Index { index: 4 })),
            }),
        ),
    ];
    WriteRequest {
        device_id: 1,
        role: "intpath".into(),
        election_id: Some(Uint128 {
            high: 1,
            low: 1 << 63,
        }),
        updates,
        atomicity: write_request::Atomicity::RollbackOnError as i32,
        ..Default::default()
    }
}

fn samples() -> Vec<Sample> {
    let info = p4info_sample();
    let pipeline = ForwardingPipelineConfig {
        p4info: Some(info.clone()),
        p4_device_config: br#"{"program": "sr_int.p4"}"#.to_vec(),
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

fn work_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("intpath-p4rt-compat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn matches_official_p4runtime_python_bindings() {
    let dir = work_dir();
    std::fs::write(dir.join("ours.desc"), FILE_DESCRIPTOR_SET).unwrap();
    let samples = samples();
    let manifest: Vec<String> = samples
        .iter()
        .map(|s| format!(r#"{{"name":"{}","type":"{}"}}"#, s.name, s.type_name))
        .collect();
    std::fs::write(
        dir.join("samples.json"),
        format!("[{}]", manifest.join(",")),
    )
    .unwrap();
    for s in &samples {
        std::fs::write(dir.join(format!("{}.bin", s.name)), &s.bytes).unwrap();
    }

    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&dir)
        .env("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'p4'"),
        "the official bindings are missing: run scripts/install-deps.sh (pip install p4runtime)"
    );
    assert!(
        out.status.success(),
        "compat.py found differences:\n{stdout}\n{stderr}"
    );
    println!("{stdout}");

    let failures: Vec<String> = samples
        .iter()
        .filter_map(|s| {
            let python = std::fs::read(dir.join(format!("{}.py.bin", s.name)))
                .map_err(|e| e.to_string())
                .and_then(|b| (s.check)(&b));
            python.err().map(|e| format!("sample {}: {e}", s.name))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    std::fs::remove_dir_all(&dir).ok();
}
