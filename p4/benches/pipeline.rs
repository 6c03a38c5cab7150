//! The pure pipeline rate: frames through parser, ingress, egress and
//! deparser in one thread, no I/O, no queue. Each iteration copies the frame
//! into the packet buffer first, as a receive would.
//!
//! `cargo bench -p intpath-switch --bench pipeline`

use intpath_switch::counters::Counters;
use intpath_switch::packet::PacketBuf;
use intpath_switch::pipeline::Pipeline;
use intpath_switch::tables::{Entry, Ipv4Action, Route, Tables, WriteOp};
use intpath_test_support::probe_frames::{transit_frame, with_udp_dst_port};
use std::hint::black_box;
use std::time::Instant;

const ITERATIONS: u32 = 2_000_000;

fn ipv4() -> Vec<u8> {
    with_udp_dst_port(transit_frame(vec![], 0), 5000)
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
        &transit_frame(vec![], 0),
    );
    run(
        "probe transit (pop label, push record #4)",
        &tables,
        &transit_frame(vec![2, 3], 3),
    );
    run(
        "probe transit, long path (record #31)",
        &tables,
        &transit_frame(vec![2], 30),
    );
}
