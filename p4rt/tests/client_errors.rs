//! How the client reports trouble: an unreachable switch, a switch that
//! does not answer, a lost arbitration, rejected updates. The shared fake
//! device plays the misbehaving switch over real gRPC; the client against
//! the reference switch is tested in the p4 crate, against gRPC C-core in
//! ccore_server.rs.

mod common;

use intpath_p4rt::client::{self, Client, ClientConfig, ClientError, Target};
use intpath_p4rt::p4info::Match;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_test_support::fake_device::FakeDevice;
use std::time::{Duration, Instant};

async fn serve(primary_from: u128) -> String {
    let device = FakeDevice {
        primary_from,
        reject_every_second_update: true,
        ..Default::default()
    };
    device.serve().await.addr
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

#[tokio::test]
async fn unreachable_switch_names_switch_and_address() {
    // A port that was just free: nothing listens there.
    let addr = intpath_test_support::free_addr();
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
    let addr = serve(5).await;
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

/// A client of a fake switch that refuses every second update, and
/// inserts of `n` routes (10.0.0.0/32 on, out of port i % 256).
async fn routes_to_a_picky_switch(n: u32) -> (Client, Vec<p4::Update>) {
    let addr = serve(1).await;
    let mut c = Client::connect(config(&addr, 1)).await.unwrap();
    let ix = common::index();
    c.set_pipeline(ix.clone(), b"{}".to_vec(), 1).await.unwrap();
    let updates = (0..n)
        .map(|i| {
            let addr = (0x0a00_0000 + i).to_be_bytes();
            let e = ix
                .table_entry(
                    common::ROUTES,
                    &[("hdr.ipv4.dst_addr", Match::Lpm(addr.to_vec(), 32))],
                    "Ingress.ipv4_forward",
                    &[("dst_mac", &[1][..]), ("port", &[i as u8][..])],
                )
                .unwrap();
            client::update(p4::update::Type::Insert, p4::entity::Entity::TableEntry(e))
        })
        .collect();
    (c, updates)
}

#[tokio::test]
async fn rejected_updates_are_named_with_the_switch_message() {
    let (c, updates) = routes_to_a_picky_switch(5).await;
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
            "update 3 (INSERT Ingress.ipv4_lpm hdr.ipv4.dst_addr=0x0a000003/32 -> \
             Ingress.ipv4_forward(dst_mac=0x01, port=0x03)): InvalidArgument: entry 3 is not welcome here"
        ),
        "{text}"
    );
}

/// A switch that reports every update of a large refused batch, as PI
/// does, sends more than hyper's default 16 KiB of response metadata; the
/// client accepts it and still shows only the first reasons.
#[tokio::test]
async fn a_large_refused_batch_still_names_its_failures() {
    let (c, updates) = routes_to_a_picky_switch(2000).await;
    let e = c.write(updates).await.err().unwrap();
    let ClientError::Write {
        rejected, failures, ..
    } = &e
    else {
        panic!("expected Write error, got {e}");
    };
    assert_eq!((*rejected, failures.len()), (1000, 1000));
    let text = e.to_string();
    assert!(text.contains("1000 of 2000 updates rejected"), "{text}");
    assert!(text.contains("entry 1 is not welcome here"), "{text}");
    assert!(text.contains("... and 990 more"), "{text}");
    assert_eq!(text.lines().count(), 12, "{text}");
}
