//! The P4Runtime client against the reference switch (this crate's
//! `intpath-switch` binary) over real gRPC: pipeline, writes, read-back, sync, arbitration between
//! two controllers, counters, packet-out/in, restart and re-sync.

use intpath_core::wire::{IntRecordRepr, ProbeRepr};
use intpath_p4rt::client::{self, Arbitration, Client, ClientError};
use intpath_p4rt::p4info::{Match, P4InfoIndex};
use intpath_p4rt::proto::p4::v1 as p4;
use std::sync::Arc;
use std::time::{Duration, Instant};

use intpath_test_support::probe_frames::sample_probe;
use intpath_test_support::{free_addr, switch::SwitchProc};

fn index() -> Arc<P4InfoIndex> {
    Arc::new(intpath_sr_int::p4info().expect("built-in P4Info"))
}

fn start(device_id: u64) -> SwitchProc {
    SwitchProc::start_with(
        std::path::Path::new(env!("CARGO_BIN_EXE_intpath-switch")),
        device_id,
        free_addr(),
        &[],
    )
}

fn name(sw: &SwitchProc) -> String {
    format!("s{}", sw.device_id)
}

/// A small program: switch id, routes to `n` hosts, a generator and a sink.
fn entries(ix: &P4InfoIndex, n: u8, route_port: u8) -> Vec<p4::TableEntry> {
    let mut v = vec![ix
        .default_entry(
            "SrIntIngress.switch_config",
            "SrIntIngress.set_switch_id",
            &[("switch_id", &[1][..])],
        )
        .unwrap()];
    for h in 1..=n {
        v.push(
            ix.table_entry(
                "SrIntIngress.ipv4_lpm",
                &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 0, h], 32))],
                "SrIntIngress.ipv4_forward",
                &[
                    ("dst_mac", &[0, 0, 10, 0, 0, h][..]),
                    ("port", &[route_port][..]),
                ],
            )
            .unwrap(),
        );
    }
    let mut labels = [0u8; 90];
    labels[..4].copy_from_slice(&[0, 2, 0, 3]);
    v.push(
        ix.table_entry(
            "SrIntIngress.generator",
            &[("hdr.sr.path_id", Match::Exact(vec![0, 7]))],
            "SrIntIngress.push_route",
            &[("num_labels", &[2][..]), ("labels", &labels[..])],
        )
        .unwrap(),
    );
    v.push(
        ix.table_entry(
            "SrIntIngress.sink",
            &[("hdr.sr.path_id", Match::Exact(vec![0, 9]))],
            "SrIntIngress.sink_to_cpu",
            &[],
        )
        .unwrap(),
    );
    v
}

async fn programmed(sw: &SwitchProc) -> (Client, Arc<P4InfoIndex>) {
    let mut c = Client::connect(sw.config(&name(sw), 10)).await.unwrap();
    let ix = index();
    // The reference switch boots with sr_int.p4 loaded: same P4Info, adopted.
    c.ensure_pipeline(ix.clone(), b"{}", 1, false)
        .await
        .unwrap();
    (c, ix)
}

#[tokio::test]
async fn program_read_back_and_sync_minimal_diff() {
    let sw = start(1);
    let (c, ix) = programmed(&sw).await;
    let want = entries(&ix, 4, 1);
    let plan = c.sync(&want, &[]).await.unwrap();
    assert_eq!((plan.inserts, plan.modifies, plan.deletes), (6, 1, 0));

    // Read-back: every entry as written, the default action too.
    let mut read = c.read_table_entries(None).await.unwrap();
    let mut written: Vec<_> = want[1..].to_vec();
    let sort = |v: &mut Vec<p4::TableEntry>| v.sort_by_key(|e| format!("{e:?}"));
    sort(&mut read);
    sort(&mut written);
    let strip = |v: Vec<p4::TableEntry>| -> Vec<String> {
        v.iter().map(|e| ix.describe_entry(e)).collect()
    };
    assert_eq!(strip(read), strip(written));
    let default = c
        .read_default_entry("SrIntIngress.switch_config")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ix.describe_entry(&default), ix.describe_entry(&want[0]));

    // Again: nothing to do.
    assert!(c.sync(&want, &[]).await.unwrap().is_noop());

    // Changed: host 4 gone, host 2 moves port, host 5 new, sink removed.
    let mut changed = entries(&ix, 5, 1);
    changed.retain(|e| !ix.describe_entry(e).contains("0x0a000004/32"));
    changed.retain(|e| !ix.describe_entry(e).starts_with("SrIntIngress.sink "));
    let moved = route_to(entries(&ix, 2, 3), 2);
    changed.retain(|e| !ix.describe_entry(e).contains("0x0a000002/32"));
    changed.push(moved);
    let sink_id = ix.table("SrIntIngress.sink").unwrap().id;
    let plan = c.sync(&changed, &[sink_id]).await.unwrap();
    assert_eq!(
        (plan.inserts, plan.modifies, plan.deletes, plan.unchanged),
        (1, 1, 2, 4)
    );
    assert!(c.sync(&changed, &[sink_id]).await.unwrap().is_noop());
    assert!(c
        .read_table_entries(Some("SrIntIngress.sink"))
        .await
        .unwrap()
        .is_empty());
}

/// The route entry to 10.0.0.`host` among `entries`.
fn route_to(entries: Vec<p4::TableEntry>, host: u8) -> p4::TableEntry {
    entries
        .into_iter()
        .find(|e| {
            e.r#match.iter().any(|m| {
                matches!(&m.field_match_type,
                    Some(p4::field_match::FieldMatchType::Lpm(l)) if l.value == [10, 0, 0, host])
            })
        })
        .unwrap()
}

#[tokio::test]
async fn rejected_entry_names_entry_and_switch_message() {
    let sw = start(2);
    let (c, ix) = programmed(&sw).await;
    let route = route_to(entries(&ix, 1, 1), 1);
    let insert = || {
        client::update(
            p4::update::Type::Insert,
            p4::entity::Entity::TableEntry(route.clone()),
        )
    };
    c.write(vec![insert()]).await.unwrap();
    let e = c.write(vec![insert()]).await.unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, ClientError::Write { .. }), "{text}");
    assert!(text.contains("switch s2"), "{text}");
    assert!(
        text.contains("INSERT SrIntIngress.ipv4_lpm hdr.ipv4.dst_addr=0x0a000001/32"),
        "{text}"
    );
    assert!(text.contains("AlreadyExists"), "{text}");
}

#[tokio::test]
async fn second_controller_is_not_primary() {
    let sw = start(3);
    let (primary, _) = programmed(&sw).await;
    assert!(primary.is_primary());
    let e = Client::connect(sw.config(&name(&sw), 5))
        .await
        .err()
        .unwrap();
    match e {
        ClientError::NotPrimary { primary, ours, .. } => assert_eq!((primary, ours), (10, 5)),
        other => panic!("expected NotPrimary, got {other}"),
    }
    // A backup may observe but its writes are refused.
    let mut backup = Client::connect_observer(sw.config(&name(&sw), 5))
        .await
        .unwrap();
    assert_eq!(backup.arbitration(), Arbitration::Backup { primary: 10 });
    backup.use_p4info(index());
    let e = backup.write(vec![]).await;
    assert!(e.is_ok(), "an empty write sends nothing");
    let e = backup
        .sync(&entries(&index(), 1, 1), &[])
        .await
        .err()
        .unwrap();
    assert!(matches!(e, ClientError::NotPrimary { .. }), "{e}");
}

#[tokio::test]
async fn packet_out_to_sink_comes_back_as_packet_in_and_counts() {
    let sw = start(4);
    let (mut c, ix) = programmed(&sw).await;
    c.sync(&entries(&ix, 1, 1), &[]).await.unwrap();
    // A probe that reached its last switch: no labels left, one record.
    let mut probe = sample_probe(9, 1);
    probe.int.records.push(IntRecordRepr {
        switch_id: 3,
        ingress_port: 1,
        egress_port: 2,
        ingress_ts: 1,
        egress_ts: 2,
        enq_qdepth: 0,
        deq_timedelta: 0,
    });
    let frame = probe.to_bytes().unwrap();
    c.packet_out(frame.clone(), &[("egress_port", 0)])
        .await
        .unwrap();
    let got = c
        .next_packet_in(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("packet-in from sink_to_cpu");
    let back = ProbeRepr::parse(&got.payload).unwrap();
    assert_eq!(back.int.records.len(), 2);
    assert_eq!(
        back.int.records[0].switch_id, 1,
        "switch id from switch_config"
    );
    assert!(got.field("ingress_port").is_some(), "{got:?}");

    // Path 8 has no generator entry: dropped, counted under reason 1.
    let mut fresh = probe.clone();
    fresh.int.records.clear();
    fresh.sr.path_id = 8;
    fresh.payload.path_id = 8;
    c.packet_out(fresh.to_bytes().unwrap(), &[("egress_port", 0)])
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let cells = c
            .read_counter("SrIntIngress.drop_counter", Some(1))
            .await
            .unwrap();
        if cells.first().is_some_and(|&(i, p, _)| i == 1 && p == 1) {
            break;
        }
        assert!(Instant::now() < deadline, "drop not counted: {cells:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let all = c
        .read_counter("SrIntIngress.drop_counter", None)
        .await
        .unwrap();
    assert_eq!(all.len(), 8, "one cell per drop reason");
}

#[tokio::test]
async fn restarted_switch_is_detected_and_resynced() {
    let mut sw = start(5);
    let (mut c, ix) = programmed(&sw).await;
    let want = entries(&ix, 3, 1);
    c.sync(&want, &[]).await.unwrap();

    sw.kill();
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.arbitration() != Arbitration::Closed {
        assert!(Instant::now() < deadline, "loss of the switch not noticed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let e = c.reconnect().await.unwrap_err();
    assert!(e.to_string().contains(&sw.addr), "{e}");

    let sw = SwitchProc::start(5, sw.addr.clone());
    c.reconnect().await.unwrap();
    assert!(c.is_primary());
    // A restarted switch has lost its entries: re-sync writes them all.
    c.ensure_pipeline(ix.clone(), b"{}", 1, false)
        .await
        .unwrap();
    let plan = c.sync(&want, &[]).await.unwrap();
    assert_eq!(plan.inserts + plan.modifies, want.len());
    assert!(c.sync(&want, &[]).await.unwrap().is_noop());
    drop(sw);
}
