//! P4Runtime over real gRPC against the `intpath-switch` binary: arbitration,
//! pipeline push and refusal, writes with per-update errors, reads of
//! tables and counters, packet-out and packet-in through the pipeline.

mod common;

use intpath_core::wire::{ProbeRepr, SR_FLAG_DONE};
use intpath_p4rt::client::{update, Client, ClientConfig, ClientError, Target};
use intpath_p4rt::p4info::{Match, P4InfoIndex};
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_test_support::probe_frames::sample_probe;
use std::sync::Arc;
use std::time::Duration;

const CPU_PORT: u16 = 255;

fn insert(e: p4::TableEntry) -> p4::Update {
    update(p4::update::Type::Insert, p4::entity::Entity::TableEntry(e))
}

#[tokio::test(flavor = "current_thread")]
async fn p4runtime_tables_counters_pipeline_and_packet_io() {
    let sw = common::start_switch(7, &["--cpu-port".into(), CPU_PORT.to_string()]);
    let mut client = common::connect(&sw, 10).await;
    assert_eq!(client.capabilities().await.unwrap(), "1.3.0");

    // The switch runs the embedded P4Info: pushing the same one is accepted.
    let index = common::p4info_index();
    client
        .set_pipeline(index.clone(), br#"{"program": "sr_int.p4"}"#.to_vec(), 42)
        .await
        .expect("the repository's P4Info is accepted");
    let (info, cookie) = client.get_pipeline().await.unwrap().expect("a pipeline");
    assert_eq!(cookie, 42);
    assert_eq!(&info, index.p4info());

    // A P4Info that renames a parameter and narrows a key is refused, by name.
    let text = std::fs::read_to_string(common::p4info_path())
        .unwrap()
        .replace("name: \"dst_mac\"", "name: \"next_hop_mac\"");
    let bad = Arc::new(P4InfoIndex::new(intpath_p4rt::p4info::from_text(&text).unwrap()).unwrap());
    let err = client
        .set_pipeline(bad, Vec::new(), 1)
        .await
        .expect_err("mismatched P4Info refused");
    let msg = err.to_string();
    assert!(
        msg.contains("SrIntIngress.ipv4_forward") && msg.contains("next_hop_mac"),
        "{msg}"
    );
    assert!(
        matches!(
            err,
            ClientError::Rpc {
                code: tonic::Code::InvalidArgument,
                ..
            }
        ),
        "{err}"
    );
    client.use_p4info(index.clone());

    // Writes.
    let config = index
        .default_entry(
            "SrIntIngress.switch_config",
            "SrIntIngress.set_switch_id",
            &[("switch_id", &[7])],
        )
        .unwrap();
    let generator = index
        .table_entry(
            "SrIntIngress.generator",
            &[("hdr.sr.path_id", Match::Exact(vec![0, 9]))],
            "SrIntIngress.push_route",
            &[("num_labels", &[0]), ("labels", &[0])],
        )
        .unwrap();
    let sink = index
        .table_entry(
            "SrIntIngress.sink",
            &[("hdr.sr.path_id", Match::Exact(vec![9]))],
            "SrIntIngress.sink_to_cpu",
            &[],
        )
        .unwrap();
    let route = index
        .table_entry(
            "SrIntIngress.ipv4_lpm",
            &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 9, 0], 24))],
            "SrIntIngress.ipv4_forward",
            &[("dst_mac", &[0x0a, 0, 9, 9]), ("port", &[2])],
        )
        .unwrap();
    client
        .write(vec![
            update(
                p4::update::Type::Modify,
                p4::entity::Entity::TableEntry(config.clone()),
            ),
            insert(generator.clone()),
            insert(sink.clone()),
            insert(route.clone()),
        ])
        .await
        .expect("entries written");

    // Read back: every entry as written (canonical values).
    let mut entries = client.read_table_entries(None).await.unwrap();
    entries.sort_by_key(|e| e.table_id);
    let mut want = vec![generator.clone(), sink.clone(), route.clone()];
    want.sort_by_key(|e| e.table_id);
    assert_eq!(entries, want);
    let lpm = client
        .read_table_entries(Some("SrIntIngress.ipv4_lpm"))
        .await
        .unwrap();
    assert_eq!(lpm, vec![route.clone()]);
    let default = client
        .read_default_entry("SrIntIngress.switch_config")
        .await
        .unwrap()
        .expect("default entry");
    assert_eq!(default, config);

    // One bad update in a batch: only it fails, with its own code.
    let other = index
        .table_entry(
            "SrIntIngress.sink",
            &[("hdr.sr.path_id", Match::Exact(vec![10]))],
            "SrIntIngress.sink_to_collector",
            &[],
        )
        .unwrap();
    let err = client
        .write(vec![insert(sink.clone()), insert(other)])
        .await
        .expect_err("duplicate insert refused");
    match err {
        ClientError::Write {
            failures, total, ..
        } => {
            assert_eq!(total, 2);
            assert_eq!(failures.len(), 1, "{failures:?}");
            assert_eq!(failures[0].index, 0);
            assert_eq!(failures[0].code, tonic::Code::AlreadyExists);
        }
        other => panic!("expected per-update failures, got {other}"),
    }
    assert_eq!(
        client
            .read_table_entries(Some("SrIntIngress.sink"))
            .await
            .unwrap()
            .len(),
        2,
        "the valid update of the failed batch was applied"
    );

    // Packet-out to port 0 runs the pipeline: generator (no labels), sink
    // to CPU, packet-in with this switch's record.
    let frame = sample_probe(9, 1).to_bytes().unwrap();
    client
        .packet_out(frame, &[("egress_port", 0)])
        .await
        .unwrap();
    let pin = client
        .next_packet_in(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("a packet-in");
    assert_eq!(pin.field("ingress_port"), Some(u128::from(CPU_PORT)));
    let back = ProbeRepr::parse(&pin.payload).expect("a well-formed probe");
    assert_eq!(back.sr.flags & SR_FLAG_DONE, SR_FLAG_DONE);
    assert_eq!(back.int.records.len(), 1);
    let r = back.int.records[0];
    assert_eq!(
        (r.switch_id, r.ingress_port, r.egress_port),
        (7, CPU_PORT, CPU_PORT)
    );
    assert_eq!(back.int.remaining_hops, 44);

    // Counters: the packet-out came in on the CPU port and left on it.
    let rx = client
        .read_counter("SrIntIngress.rx_port_counter", Some(i64::from(CPU_PORT)))
        .await
        .unwrap();
    assert_eq!(rx.len(), 1);
    assert_eq!((rx[0].0, rx[0].1), (i64::from(CPU_PORT), 1));
    let tx = client
        .read_counter("SrIntEgress.tx_port_counter", None)
        .await
        .unwrap();
    assert_eq!(tx.len(), 512);
    assert_eq!(tx[usize::from(CPU_PORT)].1, 1);
    assert_eq!(tx.iter().map(|c| c.1).sum::<i64>(), 1);

    // A second controller with a lower election id is a backup: no writes.
    let mut config = ClientConfig::new(Target {
        name: "backup".into(),
        addr: sw.grpc.to_string(),
        device_id: 7,
    });
    config.election_id = 3;
    let backup = Client::connect(config).await;
    assert!(
        matches!(backup, Err(ClientError::NotPrimary { primary: 10, .. })),
        "{:?}",
        backup.err()
    );

    // A request for another device id is refused.
    let mut config = ClientConfig::new(Target {
        name: "wrong".into(),
        addr: sw.grpc.to_string(),
        device_id: 8,
    });
    config.election_id = 20;
    assert!(Client::connect(config).await.is_err());
}
