//! Message values that exercise every field kind of the P4Runtime protos.

use intpath_p4rt::p4info;
use intpath_p4rt::proto::p4::v1::*;
use prost::Message;
use std::path::Path;

pub fn any<M: Message>(type_name: &str, msg: &M) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{type_name}"),
        value: msg.encode_to_vec(),
    }
}

pub fn entity(e: entity::Entity) -> Entity {
    Entity { entity: Some(e) }
}

pub fn p4info_sample() -> p4info::P4Info {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/all_kinds.p4info.txtpb");
    p4info::load(&path).expect("sample P4Info parses")
}

pub fn table_entry() -> TableEntry {
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

pub fn update(kind: update::Type, e: entity::Entity) -> Update {
    Update {
        r#type: kind as i32,
        entity: Some(entity(e)),
    }
}

pub fn write_request() -> WriteRequest {
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
