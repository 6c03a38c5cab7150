//! The pure pipeline rate: frames through parser, ingress, egress and
//! deparser in one thread, no I/O, no queue. Each iteration copies the frame
//! into the packet buffer first, as a receive would.
//!
//! `cargo bench -p intpath-switch --bench pipeline`

use intpath_core::wire::{EtherType, EthernetRepr, IntRecordRepr, MacAddr, PayloadRepr, ProbeRepr};
use intpath_switch::counters::Counters;
use intpath_switch::packet::PacketBuf;
use intpath_switch::pipeline::Pipeline;
use intpath_switch::tables::{Entry, Ipv4Action, Route, Tables, WriteOp};
use std::hint::black_box;
use std::net::Ipv4Addr;
use std::time::Instant;

const ITERATIONS: u32 = 2_000_000;

fn probe(labels: Vec<u16>, records: usize) -> Vec<u8> {
    let mut p = ProbeRepr::fresh(
        EthernetRepr {
            src: MacAddr([0, 0, 0, 0, 1, 1]),
            dst: MacAddr([0, 0, 0, 0, 2, 2]),
            ethertype: EtherType::Ipv4,
        },
        Ipv4Addr::new(10, 0, 1, 1),
        Ipv4Addr::new(10, 0, 9, 9),
        PayloadRepr {
            path_id: 7,
            sequence: 1,
            send_ts: 0,
        },
        45,
    );
    p.sr.labels = labels;
    p.int.records = vec![IntRecordRepr::default(); records];
    p.int.remaining_hops = 45 - records as u8;
    p.to_bytes().unwrap()
}

fn ipv4() -> Vec<u8> {
    // A probe frame with another UDP port is plain IPv4/UDP to the parser.
    let mut f = probe(vec![], 0);
    intpath_core::wire::UdpPacket::new_unchecked(
        &mut f[intpath_core::wire::ETHERNET_HEADER_LEN + intpath_core::wire::IPV4_HEADER_LEN..],
    )
    .set_dst_port(5000);
    f
}

fn run(name: &str, tables: &Tables, frame: &[u8]) {
    let pipeline = Pipeline::new(255);
    let counters = Counters::default();
    let mut pkt = PacketBuf::new();
    pkt.load(frame).unwrap();
    assert!(
        pipeline
            .process(tables, &counters, &mut pkt, 1, 0)
            .is_some(),
        "{name}: the benchmark frame must be forwarded"
    );
    let start = Instant::now();
    for i in 0..ITERATIONS {
        pkt.load(black_box(frame)).unwrap();
        black_box(pipeline.process(tables, &counters, &mut pkt, 1, u64::from(i)));
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(ITERATIONS);
    println!(
        "{name:<44} {:>5} B  {ns:>7.1} ns/packet  {:>6.2} Mpps",
        frame.len(),
        1e3 / ns
    );
}

fn main() {
    let mut tables = Tables::default();
    let writes = [
        Entry::SwitchConfigDefault(1),
        Entry::Ipv4 {
            addr: 0x0a00_0900,
            prefix_len: 24,
            action: Ipv4Action::Forward {
                dst_mac: [0, 0, 0x0a, 0, 9, 9],
                port: 2,
            },
        },
        Entry::Generator {
            path_id: 7,
            action: intpath_switch::tables::GeneratorAction::PushRoute(
                Route::from_labels(&[2, 3, 4, 5, 6]).unwrap(),
            ),
        },
    ];
    for (i, e) in writes.into_iter().enumerate() {
        let op = if i == 0 {
            WriteOp::Modify
        } else {
            WriteOp::Insert
        };
        tables.apply(op, e).unwrap();
    }
    // Fill the LPM table so that lookups probe several prefix lengths.
    for i in 0..500u32 {
        let addr = 0x0b00_0000 | (i << 8);
        let e = Entry::Ipv4 {
            addr,
            prefix_len: 24 + (i % 8) as u8,
            action: Ipv4Action::Drop,
        };
        let _ = tables.apply(WriteOp::Insert, e);
    }
    println!("pipeline only (one thread, {ITERATIONS} packets per case)");
    run("ipv4_lpm forward", &tables, &ipv4());
    run(
        "probe generator (push 5 labels, 1 record)",
        &tables,
        &probe(vec![], 0),
    );
    run(
        "probe transit (pop label, push record #4)",
        &tables,
        &probe(vec![2, 3], 3),
    );
    run(
        "probe transit, long path (record #31)",
        &tables,
        &probe(vec![2], 30),
    );
}
