//! Three reference switches in a line on veth pairs in a network namespace,
//! programmed over P4Runtime:
//!
//! ```text
//! h1 --[1] s1 [2]--[1] s2 [2]--[1] s3 [2]-- h2 (collector)
//! ```
//! A probe injected at h1 arrives at h2 with three INT records naming the
//! right switches and ports; when s2's egress port is throttled under load
//! (at run time, through the admin interface), the queue depth and queueing
//! delay it records rise, and its queue tail-drops.
//!
//! Needs root (network namespaces): ignored unless run with `--include-ignored`.

mod common;

use common::SwitchProcess;
use intpath_core::wire::{
    EtherType, EthernetRepr, Ipv4Repr, MacAddr, ProbeRepr, UdpRepr, ETHERNET_HEADER_LEN,
    IPV4_HEADER_LEN, IP_PROTO_UDP, SR_FLAG_DONE, UDP_HEADER_LEN,
};
use intpath_p4rt::client::{update, Client};
use intpath_p4rt::p4info::Match;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_switch::io::{self, Backend, FrameRx};
use intpath_switch::packet::PacketBuf;
use intpath_test_support::netns::Netns;
use intpath_test_support::probe_frames::{sample_probe, SAMPLE_COLLECTOR_IP};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

const PATH_ID: u16 = 7;
const COLLECTOR: Ipv4Addr = SAMPLE_COLLECTOR_IP;

fn eth() -> EthernetRepr {
    EthernetRepr {
        src: MacAddr([0, 0, 0x0a, 0, 1, 1]),
        dst: MacAddr([0, 0, 0x0a, 0, 0, 1]),
        ethertype: EtherType::Ipv4,
    }
}

fn probe(sequence: u32) -> Vec<u8> {
    let mut p = sample_probe(PATH_ID, sequence);
    p.eth = eth();
    p.to_bytes().unwrap()
}

/// Plain UDP towards the collector: the load that congests s2.
fn background() -> Vec<u8> {
    let payload = 200;
    let mut f = vec![0u8; ETHERNET_HEADER_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN + payload];
    eth().emit(&mut intpath_core::wire::EthernetFrame::new_unchecked(
        &mut f[..],
    ));
    Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 1, 1),
        dst: COLLECTOR,
        protocol: IP_PROTO_UDP,
        ttl: 64,
        payload_len: UDP_HEADER_LEN + payload,
    }
    .emit(&mut intpath_core::wire::Ipv4Packet::new_unchecked(
        &mut f[ETHERNET_HEADER_LEN..],
    ))
    .unwrap();
    UdpRepr {
        src_port: 4000,
        dst_port: 5000,
        payload_len: payload,
    }
    .emit(&mut intpath_core::wire::UdpPacket::new_unchecked(
        &mut f[ETHERNET_HEADER_LEN + IPV4_HEADER_LEN..],
    ))
    .unwrap();
    f
}

async fn program(client: &Client, switch_id: u32, route: &[u16], sink: bool) {
    let index = client.index().expect("P4Info").clone();
    let mut updates = vec![update(
        p4::update::Type::Modify,
        p4::entity::Entity::TableEntry(
            index
                .default_entry(
                    "SrIntIngress.switch_config",
                    "SrIntIngress.set_switch_id",
                    &[("switch_id", &switch_id.to_be_bytes())],
                )
                .unwrap(),
        ),
    )];
    let mut add = |e: p4::TableEntry| {
        updates.push(update(
            p4::update::Type::Insert,
            p4::entity::Entity::TableEntry(e),
        ))
    };
    add(index
        .table_entry(
            "SrIntIngress.ipv4_lpm",
            &[("hdr.ipv4.dst_addr", Match::Lpm(vec![10, 0, 9, 0], 24))],
            "SrIntIngress.ipv4_forward",
            &[("dst_mac", &[0x0a, 0, 9, 9]), ("port", &[2])],
        )
        .unwrap());
    if !route.is_empty() {
        let mut labels = vec![0u8; 90];
        for (i, l) in route.iter().enumerate() {
            labels[2 * i..2 * i + 2].copy_from_slice(&l.to_be_bytes());
        }
        add(index
            .table_entry(
                "SrIntIngress.generator",
                &[(
                    "hdr.sr.path_id",
                    Match::Exact(PATH_ID.to_be_bytes().to_vec()),
                )],
                "SrIntIngress.push_route",
                &[("num_labels", &[route.len() as u8]), ("labels", &labels)],
            )
            .unwrap());
    }
    if sink {
        add(index
            .table_entry(
                "SrIntIngress.sink",
                &[(
                    "hdr.sr.path_id",
                    Match::Exact(PATH_ID.to_be_bytes().to_vec()),
                )],
                "SrIntIngress.sink_to_collector",
                &[],
            )
            .unwrap());
    }
    client.write(updates).await.expect("entries written");
}

/// Probes arriving at the collector within `wait`, until `n` are seen.
fn collect_probes(rx: &mut dyn FrameRx, n: usize, wait: Duration) -> Vec<ProbeRepr> {
    let mut bufs: Vec<PacketBuf> = (0..io::BATCH).map(|_| PacketBuf::new()).collect();
    let mut probes = Vec::new();
    let deadline = Instant::now() + wait;
    while probes.len() < n && Instant::now() < deadline {
        let got = rx.recv(&mut bufs).expect("receive at the collector");
        for b in &bufs[..got] {
            if let Ok(p) = ProbeRepr::parse(b.data()) {
                probes.push(p);
            }
        }
    }
    probes
}

#[test]
#[ignore = "needs root"]
fn probe_crosses_three_switches_and_sees_congestion() {
    let ns = Netns::new("ipsw-line");
    for (a, b) in [
        ("h1", "s1p1"),
        ("s1p2", "s2p1"),
        ("s2p2", "s3p1"),
        ("s3p2", "h2"),
    ] {
        ns.veth(a, b);
    }
    ns.enter();
    let admin_addr = common::free_addr();
    let switches: Vec<SwitchProcess> = (1..=3)
        .map(|n| {
            let mut args = vec![
                "--cpu-port".to_string(),
                "255".into(),
                "-i".into(),
                format!("1@s{n}p1"),
                "-i".into(),
                format!("2@s{n}p2"),
                // Deep queues around s2, bmv2's default of 64 at s2.
                "--queue-depth".into(),
                if n == 2 { "64".into() } else { "1024".into() },
            ];
            if n == 2 {
                args.extend(["--admin-addr".into(), admin_addr.to_string()]);
            }
            common::start_switch(n, &args)
        })
        .collect();
    let (_h1_rx, h1) = io::open("h1", Backend::Mmsg).expect("h1");
    let (mut h2, _h2_tx) = io::open("h2", Backend::Mmsg).expect("h2");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _clients: Vec<Client> = runtime.block_on(async {
        let mut clients = Vec::new();
        for (i, sw) in switches.iter().enumerate() {
            let c = common::connect(sw, 1).await;
            match i {
                0 => program(&c, 1, &[2, 2], false).await,
                1 => program(&c, 2, &[], false).await,
                _ => program(&c, 3, &[], true).await,
            }
            clients.push(c);
        }
        clients
    });

    // An idle network: one probe, three records, newest (s3) first.
    h1.send(&[&probe(1)]).unwrap();
    let got = collect_probes(h2.as_mut(), 1, Duration::from_secs(5));
    assert_eq!(got.len(), 1, "the probe did not reach the collector");
    let p = &got[0];
    assert_eq!(p.sr.flags & SR_FLAG_DONE, SR_FLAG_DONE);
    assert!(p.sr.labels.is_empty());
    assert_eq!(p.int.remaining_hops, 42);
    let hops: Vec<(u32, u16, u16)> = p
        .int
        .records
        .iter()
        .map(|r| (r.switch_id, r.ingress_port, r.egress_port))
        .collect();
    assert_eq!(hops, [(3, 1, 2), (2, 1, 2), (1, 1, 2)]);
    for r in &p.int.records {
        assert!(r.ingress_ts <= r.egress_ts, "{r:?}");
        // No rate limit yet: forwarded run to completion, past an empty queue.
        assert_eq!((r.enq_qdepth, r.deq_timedelta), (0, 0), "{r:?}");
    }
    let idle = p.int.records[1];

    // Throttle s2 towards s3 to 1000 packets/s, then load it.
    assert_eq!(common::admin(admin_addr, "set_queue_rate 1000 2"), ["ok"]);
    let load = background();
    let mut sent_probes = 0;
    // Two bursts of 25 and a probe after each: 52 packets fit the queue of 64.
    for burst in 0..2 {
        let frames: Vec<&[u8]> = std::iter::repeat_n(load.as_slice(), 25).collect();
        h1.send(&frames).unwrap();
        h1.send(&[&probe(10 + burst)]).unwrap();
        sent_probes += 1;
    }
    let loaded = collect_probes(h2.as_mut(), sent_probes, Duration::from_secs(5));
    assert_eq!(loaded.len(), sent_probes, "probes lost under load");
    let s2: Vec<_> = loaded.iter().map(|p| p.int.records[1]).collect();
    assert!(s2.iter().all(|r| r.switch_id == 2));
    let max_depth = s2.iter().map(|r| r.enq_qdepth).max().unwrap();
    let max_delay = s2.iter().map(|r| r.deq_timedelta).max().unwrap();
    // ~50 packets ahead at 1000 pps: about 50 ms of queueing.
    assert!(max_depth >= 25, "s2 queue depth under load: {s2:?}");
    assert!(max_delay >= 20_000, "s2 queueing delay under load: {s2:?}");
    assert!(max_depth > idle.enq_qdepth && max_delay > idle.deq_timedelta);
    // The unthrottled first hop may queue a burst but drains it at once.
    let s1_delay = loaded
        .iter()
        .map(|p| p.int.records[2].deq_timedelta)
        .max()
        .unwrap();
    assert!(
        s1_delay * 4 < max_delay,
        "s1 {s1_delay} µs vs s2 {max_delay} µs"
    );

    // More than the queue holds: tail drops.
    let frames: Vec<&[u8]> = std::iter::repeat_n(load.as_slice(), 150).collect();
    h1.send(&frames).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let queues = common::admin(admin_addr, "show_queues");
    let port2 = queues
        .iter()
        .find(|l| l.starts_with("port 2 "))
        .expect("port 2 in show_queues");
    let drops: u64 = port2
        .split_once("tail_drops ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|d| d.parse().ok())
        .expect("tail_drops value");
    assert!(port2.contains("rate_pps 1000 depth 64"), "{port2}");
    assert!(drops > 0, "no tail drops: {port2}");
    drop(switches);
}
