//! Forwarding rate of one `intpath-switch` process on veth pairs:
//!
//! ```text
//! gen --[1] switch [2]-- sink
//! ```
//! A generator thread sends frames into `gen` (sendmmsg batches), a
//! receiver thread counts what leaves on `sink`. Per I/O backend and frame
//! kind: the rate at full offered load, and the loss at a paced 800 kpps
//! (ten times bmv2's published ~80 kpps). Everything shares the machine's
//! cores: generator, receiver and the switch's two busy threads, so the
//! switch's own CPU time is reported too: forwarded frames per CPU-second of
//! the switch process is what it would forward with a core to itself.
//!
//! Needs root. `cargo bench -p intpath-switch --bench veth_forwarding`

#[path = "../tests/common/mod.rs"]
mod common;

use intpath_switch::io::{self, Backend, BATCH};
use intpath_switch::packet::PacketBuf;
use intpath_test_support::netns::Netns;
use intpath_test_support::probe_frames::{transit_frame, with_udp_dst_port};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DURATION: Duration = Duration::from_secs(3);
const PACED_PPS: u64 = 800_000;

/// User + system CPU seconds a process has used so far (from
/// `/proc/PID/stat`; the kernel's work on its system calls included).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the whole line.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

/// Sends `frame` into `gen` for DURATION (paced when `pps` is given) and
/// counts frames on `sink`. Returns (sent, received).
fn measure(frame: &[u8], pps: Option<u64>) -> (u64, u64) {
    let (_g_rx, mut gen) = io::open("gen", Backend::Mmsg).expect("gen");
    let (mut sink, _s_tx) = io::open("sink", Backend::Mmsg).expect("sink");
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
        if let Some(pps) = pps {
            let due = Duration::from_nanos(sent * 1_000_000_000 / pps);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
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
    let ns = Netns::new("ipsw-bench");
    ns.veth("gen", "s1p1");
    ns.veth("s1p2", "sink");
    ns.enter();
    let entries = std::env::temp_dir().join(format!("ipsw-bench-{}.json", std::process::id()));
    std::fs::write(
        &entries,
        r#"[{"table": "SrIntIngress.switch_config", "default": true,
             "action": "SrIntIngress.set_switch_id", "params": {"switch_id": "0x1"}},
            {"table": "SrIntIngress.ipv4_lpm",
             "match": [{"field": "hdr.ipv4.dst_addr", "lpm": "0x0a000900", "prefix_len": 24}],
             "action": "SrIntIngress.ipv4_forward",
             "params": {"dst_mac": "0x00000a000909", "port": "0x2"}}]"#,
    )
    .unwrap();
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
    for backend in ["mmsg", "pnet"] {
        for (name, f) in &cases {
            for pps in [None, Some(PACED_PPS)] {
                let sw = common::start_switch(
                    1,
                    &[
                        "-i".into(),
                        "1@s1p1".into(),
                        "-i".into(),
                        "2@s1p2".into(),
                        "--io".into(),
                        backend.into(),
                        "--queue-depth".into(),
                        "1024".into(),
                        "--entries".into(),
                        entries.display().to_string(),
                    ],
                );
                let cpu_before = cpu_seconds(sw.child.id());
                let (sent, received) = measure(f, pps);
                let cpu = cpu_seconds(sw.child.id()) - cpu_before;
                drop(sw);
                let secs = DURATION.as_secs_f64();
                println!(
                    "{backend:<5} {name:<30} {:>5} B  offered {:>9.0} pps  forwarded {:>9.0} pps  loss {:>5.1}%  \
                     switch CPU {cpu:>4.2} s = {:>9.0} pps per CPU-second",
                    f.len(),
                    sent as f64 / secs,
                    received as f64 / secs,
                    100.0 * (1.0 - received as f64 / sent.max(1) as f64),
                    received as f64 / cpu.max(1e-3)
                );
            }
        }
    }
    let _ = std::fs::remove_file(entries);
}
