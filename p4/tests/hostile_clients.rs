//! Clients that try to make the switch work or remember too much, or to
//! write without being the primary, over real gRPC against the
//! `intpath-switch` binary; and the read filters a well-behaved client uses.

mod common;

use intpath_p4rt::client::{to_uint128, update};
use intpath_p4rt::p4info::Match;
use intpath_p4rt::proto::p4::v1::{self as p4, p4_runtime_client::P4RuntimeClient};
use prost::Message;
use tonic::transport::Channel;
use tonic::Code;

/// Every counter cell of the program: rx and tx per port, drop reasons.
const COUNTER_CELLS: usize = 512 + 512 + 8;
/// A response may pass 64 KiB by one entity.
const RESPONSE_BOUND: usize = (64 << 10) + 1024;

/// A plain gRPC connection of its own (not the primary's).
async fn raw(sw: &common::SwitchProcess) -> P4RuntimeClient<Channel> {
    P4RuntimeClient::connect(format!("http://{}", sw.grpc))
        .await
        .expect("gRPC connect")
        .max_decoding_message_size(256 << 20)
}

fn counter_filter(packet_count: i64) -> p4::Entity {
    p4::Entity {
        entity: Some(p4::entity::Entity::CounterEntry(p4::CounterEntry {
            // Ignored by the switch as a filter; makes each entity distinct.
            data: (packet_count > 0).then_some(p4::CounterData {
                packet_count,
                byte_count: 0,
            }),
            ..Default::default()
        })),
    }
}

/// The status of a read that must fail.
async fn refused(
    grpc: &mut P4RuntimeClient<Channel>,
    device_id: u64,
    entities: Vec<p4::Entity>,
) -> tonic::Status {
    match read_all(grpc, device_id, entities).await {
        Ok(r) => panic!("answered with {} responses", r.len()),
        Err(status) => status,
    }
}

/// All responses of a read, or its status.
async fn read_all(
    grpc: &mut P4RuntimeClient<Channel>,
    device_id: u64,
    entities: Vec<p4::Entity>,
) -> Result<Vec<p4::ReadResponse>, tonic::Status> {
    let mut stream = grpc
        .read(p4::ReadRequest {
            device_id,
            entities,
            ..Default::default()
        })
        .await?
        .into_inner();
    let mut out = Vec::new();
    while let Some(r) = stream.message().await? {
        out.push(r);
    }
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_wildcard_reads_in_4_kib_cost_one_read() {
    let sw = common::start_switch(1, &[]);
    let request: Vec<p4::Entity> = (0..1000).map(|_| counter_filter(0)).collect();
    let size = p4::ReadRequest {
        device_id: 1,
        entities: request.clone(),
        ..Default::default()
    }
    .encoded_len();
    assert!(size <= 4096, "the request is {size} bytes");
    let (responses, entries) = bounded_read(&sw, request, "1000 wildcards").await;
    assert_eq!(entries, COUNTER_CELLS, "identical filters count once");
    assert_eq!(responses, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_read_streams_in_bounded_responses() {
    let sw = common::start_switch(1, &[]);
    // 60 distinct filters that each select every counter cell: 61,920
    // entries, under the cap, about 1 MB encoded.
    let filters = (1..=60).map(counter_filter).collect();
    let (responses, entries) = bounded_read(&sw, filters, "60 distinct wildcards").await;
    assert_eq!(entries, 60 * COUNTER_CELLS);
    assert!(responses >= 10, "{responses} responses");
}

/// Reads `filters` on a connection of its own and checks that every
/// response and the switch's peak memory stay bounded: (responses, entries).
async fn bounded_read(
    sw: &common::SwitchProcess,
    filters: Vec<p4::Entity>,
    what: &str,
) -> (usize, usize) {
    let mut grpc = raw(sw).await;
    let before = common::peak_rss_bytes(sw.child.id());
    let responses = read_all(&mut grpc, 1, filters).await.unwrap();
    let grown = common::peak_rss_bytes(sw.child.id()).saturating_sub(before);
    let entries: usize = responses.iter().map(|r| r.entities.len()).sum();
    let largest = responses
        .iter()
        .map(Message::encoded_len)
        .max()
        .unwrap_or(0);
    eprintln!(
        "{what}: {entries} entries in {} responses (largest {largest} bytes), switch's peak grew {} KiB",
        responses.len(),
        grown >> 10
    );
    assert!(largest <= RESPONSE_BOUND, "a response of {largest} bytes");
    assert!(grown < 16 << 20, "the switch's peak grew by {grown} bytes");
    (responses.len(), entries)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_beyond_the_bounds_are_refused_before_any_work() {
    let sw = common::start_switch(1, &[]);
    let mut grpc = raw(&sw).await;
    // 1032 distinct filters, one cell each: more filters than allowed.
    let index = common::p4info_index();
    let cells: Vec<p4::Entity> = intpath_sr_int::schema::COUNTERS
        .iter()
        .flat_map(|c| {
            let id = index.counter(c.name).unwrap().id;
            (0..c.size as i64).map(move |i| p4::Entity {
                entity: Some(p4::entity::Entity::CounterEntry(p4::CounterEntry {
                    counter_id: id,
                    index: Some(p4::Index { index: i }),
                    data: None,
                })),
            })
        })
        .collect();
    assert_eq!(cells.len(), COUNTER_CELLS);
    let status = refused(&mut grpc, 1, cells).await;
    assert_eq!(status.code(), Code::ResourceExhausted, "{status}");
    assert!(status.message().contains("distinct entities"), "{status}");

    // 100 distinct wildcards: 103,200 entries, more than allowed.
    let status = refused(&mut grpc, 1, (1..=100).map(counter_filter).collect()).await;
    assert_eq!(status.code(), Code::ResourceExhausted, "{status}");
    assert!(
        status.message().contains("more than 65536 entries"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_4_mb_read_request_is_refused_before_it_is_decoded() {
    let sw = common::start_switch(1, &[]);
    let mut grpc = raw(&sw).await.max_encoding_message_size(64 << 20);
    // A million 4-byte entities: gRPC's default limit, ~400 MB once decoded.
    let before = common::peak_rss_bytes(sw.child.id());
    let status = refused(&mut grpc, 1, vec![counter_filter(0); 1_000_000]).await;
    let grown = common::peak_rss_bytes(sw.child.id()).saturating_sub(before);
    eprintln!(
        "4 MB request: {status}, switch's peak grew {} KiB",
        grown >> 10
    );
    assert!(status.message().contains("length limit"), "{status}");
    assert!(
        grown < 16 << 20,
        "the switch's peak memory grew by {grown} bytes"
    );
    // The connection and the switch serve the next read.
    let ok = read_all(&mut grpc, 1, vec![counter_filter(0)])
        .await
        .unwrap();
    assert_eq!(
        ok.iter().map(|r| r.entities.len()).sum::<usize>(),
        COUNTER_CELLS
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_filters_on_action_and_priority_and_default_entries() {
    let sw = common::start_switch(2, &[]);
    let client = common::connect(&sw, 10).await;
    let index = common::p4info_index();
    let generator = |path: u8, drop: bool| {
        let (action, params): (&str, &[(&str, &[u8])]) = if drop {
            ("SrIntIngress.drop", &[])
        } else {
            (
                "SrIntIngress.push_route",
                &[("num_labels", &[0]), ("labels", &[0])],
            )
        };
        index
            .table_entry(
                "SrIntIngress.generator",
                &[("hdr.sr.path_id", Match::Exact(vec![path]))],
                action,
                params,
            )
            .unwrap()
    };
    let entries = [generator(1, false), generator(2, true), generator(3, false)];
    client
        .write(
            entries
                .iter()
                .map(|e| {
                    update(
                        p4::update::Type::Insert,
                        p4::entity::Entity::TableEntry(e.clone()),
                    )
                })
                .collect(),
        )
        .await
        .unwrap();
    let table_id = entries[0].table_id;
    let filter = |action: Option<&str>, priority: i32| {
        let action = action.map(|name| p4::TableAction {
            r#type: Some(p4::table_action::Type::Action(p4::Action {
                action_id: index.action(name).unwrap().id,
                params: vec![],
            })),
        });
        p4::Entity {
            entity: Some(p4::entity::Entity::TableEntry(p4::TableEntry {
                table_id,
                action,
                priority,
                ..Default::default()
            })),
        }
    };
    let paths = |got: Vec<p4::Entity>| {
        let mut v: Vec<Vec<u8>> = got
            .into_iter()
            .filter_map(|e| match e.entity {
                Some(p4::entity::Entity::TableEntry(t)) => Some(t.r#match[0].clone()),
                _ => None,
            })
            .map(|m| match m.field_match_type {
                Some(p4::field_match::FieldMatchType::Exact(x)) => x.value,
                other => panic!("{other:?}"),
            })
            .collect();
        v.sort();
        v
    };
    let all = client.read(vec![filter(None, 0)]).await.unwrap();
    assert_eq!(paths(all), [[1], [2], [3]]);
    let drops = client
        .read(vec![filter(Some("SrIntIngress.drop"), 0)])
        .await
        .unwrap();
    assert_eq!(paths(drops), [[2]], "filtered on the action");
    let routes = client
        .read(vec![filter(Some("SrIntIngress.push_route"), 0)])
        .await
        .unwrap();
    assert_eq!(paths(routes), [[1], [3]]);
    let prioritised = client.read(vec![filter(None, 5)]).await.unwrap();
    assert!(prioritised.is_empty(), "no entry has priority 5");

    // Default entries: as the program declares them, and switch_config's
    // as written.
    for table in [
        "SrIntIngress.ipv4_lpm",
        "SrIntIngress.generator",
        "SrIntIngress.sink",
    ] {
        let default = client
            .read_default_entry(table)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{table}: no default entry"));
        assert_eq!(
            default,
            index
                .default_entry(table, "SrIntIngress.drop", &[])
                .unwrap(),
            "{table}"
        );
    }
    let switch_config = client
        .read_default_entry("SrIntIngress.switch_config")
        .await
        .unwrap()
        .expect("switch_config's default entry");
    assert_eq!(
        switch_config,
        index
            .default_entry(
                "SrIntIngress.switch_config",
                "SrIntIngress.set_switch_id",
                &[("switch_id", &[0])]
            )
            .unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_primarys_election_id_from_another_connection_cannot_write() {
    let sw = common::start_switch(3, &[]);
    let primary = common::connect(&sw, 10).await;
    let index = common::p4info_index();
    let route = |last: u8| {
        index
            .table_entry(
                "SrIntIngress.ipv4_lpm",
                &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 0, last], 32))],
                "SrIntIngress.drop",
                &[],
            )
            .unwrap()
    };
    let insert =
        |e: p4::TableEntry| update(p4::update::Type::Insert, p4::entity::Entity::TableEntry(e));

    // Another local process that knows (or guesses) the election id.
    let mut intruder = raw(&sw).await;
    let status = intruder
        .write(p4::WriteRequest {
            device_id: 3,
            election_id: Some(to_uint128(10)),
            updates: vec![insert(route(66))],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status}");
    assert!(status.message().contains("another connection"), "{status}");
    let status = intruder
        .set_forwarding_pipeline_config(p4::SetForwardingPipelineConfigRequest {
            device_id: 3,
            election_id: Some(to_uint128(10)),
            action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
            config: Some(p4::ForwardingPipelineConfig {
                p4info: Some(index.p4info().clone()),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status}");

    // The primary writes over its own connection (the one tonic channel
    // that carries its stream) and reads see only its entry; anyone may read.
    primary.write(vec![insert(route(1))]).await.unwrap();
    let got = intruder
        .read(p4::ReadRequest {
            device_id: 3,
            entities: vec![p4::Entity {
                entity: Some(p4::entity::Entity::TableEntry(p4::TableEntry::default())),
            }],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap()
        .expect("a response");
    let want = p4::Entity {
        entity: Some(p4::entity::Entity::TableEntry(route(1))),
    };
    assert_eq!(got.entities, [want]);
}
