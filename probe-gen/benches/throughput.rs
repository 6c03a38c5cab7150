//! Sending speed and rate accuracy on a veth pair, one core.
//!
//! `cargo bench -p probe-gen` (as root) prints Markdown tables for
//! BENCHMARKS.md. The sender runs on this thread, pinned to one CPU, inside a
//! private namespace; the peer's receive counter confirms what arrived.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{Veth, RX, TX};
use intpath_core::wire::{MacAddr, MAX_HOPS};
use probe_gen::frames::{Endpoints, ProbeSource};
use probe_gen::schedule::{Interarrival, Limit, Schedule, Spacing};
use probe_gen::sender::{self, Options};
use probe_gen::stats::Report;
use probe_gen::transport::{AfPacket, Interface, PnetChannel, Transport};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[derive(Clone, Copy)]
enum Tx {
    Mmsg,
    Pnet,
}

struct Run {
    tx: Tx,
    batch: usize,
    rate: f64,
    spacing: Spacing,
    /// Broadcast frames climb the peer's IP stack; unicast to another MAC
    /// is dropped by the peer's IP input at once.
    dst_mac: MacAddr,
    secs: f64,
}

/// CPU time this thread has used (user + system, which includes the
/// peer's receive work the kernel does on the sender's behalf).
fn thread_cpu() -> Duration {
    // SAFETY: rusage is plain data, filled by the call.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_THREAD, &mut ru), 0);
        ru
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// What a run did, the peer's count of frames received, and CPU time used.
fn send(v: &Veth, r: &Run) -> (Report, u64, Duration) {
    let iface = Interface::find(TX).expect("test bed interface");
    let ends = Endpoints {
        src_mac: iface.mac.unwrap_or_default(),
        dst_mac: r.dst_mac,
        src_ip: iface.ipv4.expect("test bed address"),
    };
    let mut source = ProbeSource::new(&[1], ends, "10.99.0.9".parse().unwrap(), MAX_HOPS as u8);
    let mut transport: Box<dyn Transport> = match r.tx {
        Tx::Mmsg => Box::new(AfPacket::open(&iface, false).unwrap()),
        Tx::Pnet => Box::new(PnetChannel::open(&iface).unwrap()),
    };
    let mut schedule = Schedule::new(
        vec![Interarrival::new(r.rate, r.spacing, 1).unwrap()],
        Limit {
            count_per_flow: None,
            duration: Some(Duration::from_secs_f64(r.secs)),
        },
    );
    let before = v.rx_packets(RX);
    let cpu = thread_cpu();
    let opts = Options {
        batch: r.batch,
        ..Options::default()
    };
    let report = sender::run(
        &mut schedule,
        &mut source,
        transport.as_mut(),
        &AtomicBool::new(false),
        &opts,
        &mut |_| {},
    );
    let cpu = thread_cpu() - cpu;
    (report, v.rx_packets(RX) - before, cpu)
}

fn pin_to_cpu(cpu: usize) {
    // SAFETY: cpu_set_t is plain data; the set outlives the call.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let rc = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(rc, 0, "sched_setaffinity");
    }
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

fn main() {
    let v = Veth::new("bench");
    v.enter();
    pin_to_cpu(1);
    let bcast = MacAddr::BROADCAST;
    let other: MacAddr = "02:00:00:00:00:99".parse().unwrap();

    println!("### Maximum rate, one core, 66-byte probes, 3 s each\n");
    println!("| transport | batch | peer | sent pps (wall clock) | CPU share | pps per CPU-second | errors | delivered to peer |");
    println!("|---|---|---|---|---|---|---|---|");
    let max = |tx, batch, dst_mac, peer: &str| {
        let r = Run {
            tx,
            batch,
            rate: 20e6,
            spacing: Spacing::Constant,
            dst_mac,
            secs: 3.0,
        };
        let (rep, rx, cpu) = send(&v, &r);
        let name = match tx {
            Tx::Mmsg => "AF_PACKET sendmmsg",
            Tx::Pnet => "pnet datalink",
        };
        let cpu_s = cpu.as_secs_f64();
        println!(
            "| {name} | {batch} | {peer} | {:.0} | {:.0} % | {:.0} | {} | {:.1} % |",
            rep.pps(),
            100.0 * cpu_s / rep.elapsed.as_secs_f64(),
            rep.sent as f64 / cpu_s,
            rep.errors,
            100.0 * rx as f64 / rep.sent.max(1) as f64
        );
    };
    // A unicast frame for another MAC is dropped first thing in the peer's
    // IP input: close to the generator's own cost. Broadcast frames go on to a
    // route lookup, as a host's stack would do with them.
    let ip_other = "drops (other MAC)";
    max(Tx::Pnet, 1, other, ip_other);
    max(Tx::Mmsg, 1, other, ip_other);
    max(Tx::Mmsg, 64, other, ip_other);
    let ip_bcast = "IP input (broadcast)";
    max(Tx::Pnet, 1, bcast, ip_bcast);
    max(Tx::Mmsg, 64, bcast, ip_bcast);

    println!("\n### Rate accuracy, AF_PACKET sendmmsg, 5 s each\n");
    println!("| spacing | target pps | sent pps | error | lateness p50 µs | p99 µs | max µs | send errors |");
    println!("|---|---|---|---|---|---|---|---|");
    for spacing in [Spacing::Constant, Spacing::Poisson] {
        for rate in [1e3, 1e4, 1e5] {
            let r = Run {
                tx: Tx::Mmsg,
                batch: 64,
                rate,
                spacing,
                dst_mac: other,
                secs: 5.0,
            };
            let (rep, _, _) = send(&v, &r);
            // Over the scheduled span: the run ends at its last deadline.
            let pps = rep.sent as f64 / r.secs;
            let l = &rep.lateness;
            println!(
                "| {spacing:?} | {rate:.0} | {pps:.1} | {:+.3} % | {} | {} | {} | {} |",
                100.0 * (pps - rate) / rate,
                us(l.quantile_ns(0.5)),
                us(l.quantile_ns(0.99)),
                us(l.max_ns()),
                rep.errors
            );
        }
    }
}
