//! Forwarding rate of one `intpath-switch` process on veth pairs:
//!
//! ```text
//! gen --[1] switch [2]-- sink
//! ```
//! A generator thread sends frames into `gen` (sendmmsg batches), a
//! receiver thread counts what leaves on `sink` through a receive ring, the
//! way the next switch of a fabric takes them (the same harness whatever
//! path the switch uses; on veth the switch's send pays the sink's receive). Per switch data path (I/O backend ×
//! forwarding mode, the old `mmsg` + `queued` first) and frame kind: the
//! rate at full offered load, alternated over two rounds so that the paths
//! see the same machine load. Everything shares the machine's cores:
//! generator, receiver and the switch's busy threads, so the switch's own
//! CPU time is reported too: forwarded frames per CPU-second of the switch
//! process is what it would forward with a core to itself. Last, the CPU an
//! idle switch (two ports, no traffic) uses over 10 s, old and new path.
//!
//! Needs root. `cargo bench -p intpath-switch --bench veth_forwarding`

#[path = "../tests/common/mod.rs"]
mod common;

use intpath_switch::io::{self, Backend, BATCH};
use intpath_switch::packet::PacketBuf;
use intpath_test_support::probe_frames::{transit_frame, with_udp_dst_port};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DURATION: Duration = Duration::from_secs(3);
const IDLE: Duration = Duration::from_secs(10);
const ROUNDS: usize = 2;
/// (`--io`, `--forwarding`): the path before issue 20 first, the default last.
const PATHS: [(&str, &str); 4] = [
    ("mmsg", "queued"),
    ("ring", "queued"),
    ("mmsg", "direct"),
    ("ring", "direct"),
];

/// Sends `frame` into `gen` for DURATION as fast as it goes and counts
/// frames on `sink`. Returns (sent, received).
fn measure(frame: &[u8]) -> (u64, u64) {
    let (_g_rx, gen) = io::open("gen", Backend::Mmsg).expect("gen");
    let (mut sink, _s_tx) = io::open("sink", Backend::Ring).expect("sink");
    let stop = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let counter = {
        let (stop, received) = (stop.clone(), received.clone());
        std::thread::spawn(move || {
            let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
            while !stop.load(Relaxed) {
                let n = sink.recv(&mut bufs).unwrap_or(0);
                received.fetch_add(n as u64, Relaxed);
            }
        })
    };
    let batch: Vec<&[u8]> = vec![frame; BATCH];
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < DURATION {
        if gen.send(&batch).is_ok() {
            sent += BATCH as u64;
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Relaxed);
    counter.join().unwrap();
    (sent, received.load(Relaxed))
}

fn main() {
    let _ns = common::gen_sink_lab("ipsw-bench");
    let entries = common::one_route_entries();
    println!(
        "one switch on veth, {} s per run, 2 cores shared by generator, counter and switch",
        DURATION.as_secs()
    );
    let cases = [
        (
            "ipv4 UDP",
            with_udp_dst_port(transit_frame(vec![], 0), 5000),
        ),
        ("SR-INT transit (pop + record)", transit_frame(vec![2], 0)),
    ];
    let start = |io: &str, forwarding: &str| {
        common::start_lab_switch(
            &entries,
            &[
                "--io",
                io,
                "--forwarding",
                forwarding,
                "--queue-depth",
                "1024",
            ],
        )
    };
    for round in 1..=ROUNDS {
        for (name, f) in &cases {
            for (io, forwarding) in PATHS {
                let sw = start(io, forwarding);
                let cpu_before = common::cpu_seconds(sw.child.id());
                let (sent, received) = measure(f);
                let cpu = common::cpu_seconds(sw.child.id()) - cpu_before;
                drop(sw);
                let secs = DURATION.as_secs_f64();
                println!(
                    "round {round}  {io:<4} {forwarding:<6} {name:<30} {:>4} B  offered {:>7.0} pps  \
                     forwarded {:>7.0} pps  loss {:>5.1}%  switch CPU {cpu:>4.2} s = {:>7.0} pps per CPU-second",
                    f.len(),
                    sent as f64 / secs,
                    received as f64 / secs,
                    100.0 * (1.0 - received as f64 / sent.max(1) as f64),
                    received as f64 / cpu.max(1e-3)
                );
            }
        }
    }
    for (io, forwarding) in [PATHS[0], PATHS[3]] {
        let sw = start(io, forwarding);
        // Past start-up (entries, gRPC server) before measuring.
        std::thread::sleep(Duration::from_secs(1));
        let cpu_before = common::cpu_seconds(sw.child.id());
        std::thread::sleep(IDLE);
        let cpu = common::cpu_seconds(sw.child.id()) - cpu_before;
        println!(
            "idle {io:<4} {forwarding:<6} switch CPU over {} s: {:.2} s ({:.2} % of a core)",
            IDLE.as_secs(),
            cpu,
            100.0 * cpu / IDLE.as_secs_f64()
        );
    }
    let _ = std::fs::remove_file(entries);
}
