//! Random port loss set at run time through the admin interface
//! (`set_port_loss`): at 50 % about half the frames cross the switch, the
//! rest are counted as loss drops, and 0 % restores full delivery, with
//! frames forwarded run to completion and through the egress queue alike.
//!
//! ```text
//! gen --[1] switch [2]-- sink
//! ```
//! Needs root (network namespaces): ignored unless run with `--include-ignored`.

mod common;

use intpath_switch::io::{self, Backend, FrameRx, FrameTx};
use intpath_switch::packet::PacketBuf;
use intpath_test_support::probe_frames::{transit_frame, with_udp_dst_port};
use std::net::SocketAddr;
use std::time::Duration;

const FRAMES: usize = 2000;

/// Sends `FRAMES` copies of `frame` in small paced batches and counts the
/// copies `sink` receives until it falls quiet.
fn deliver(gen: &dyn FrameTx, sink: &mut dyn FrameRx, frame: &[u8]) -> usize {
    let mut bufs = vec![PacketBuf::new(); 64];
    let mut got = 0;
    let mut count = |sink: &mut dyn FrameRx, bufs: &mut [PacketBuf]| {
        let n = sink.recv(bufs).expect("receive");
        got += bufs[..n]
            .iter()
            .filter(|b| b.data().len() == frame.len())
            .count();
        n
    };
    let batch: Vec<&[u8]> = vec![frame; 20];
    for _ in 0..FRAMES / batch.len() {
        gen.send(&batch).expect("send");
        // Drain what has arrived so that the sink's socket never overflows.
        std::thread::sleep(Duration::from_millis(2));
        while count(sink, &mut bufs) == bufs.len() {}
    }
    while count(sink, &mut bufs) > 0 {}
    got
}

/// `loss_drops` of port 2 in `show_queues`.
fn loss_drops(admin: SocketAddr) -> u64 {
    let lines = common::admin(admin, "show_queues");
    let port2 = lines
        .iter()
        .find(|l| l.starts_with("port 2 "))
        .expect("port 2 in show_queues");
    let words: Vec<&str> = port2.split(' ').collect();
    let at = words
        .iter()
        .position(|w| *w == "loss_drops")
        .expect("loss_drops");
    words[at + 1].parse().expect("a loss_drops count")
}

fn half_the_frames_cross_at_50_percent(forwarding: &str) {
    let ns = common::gen_sink_lab(&format!("ipsw-loss-{}", &forwarding[..1]));
    let entries = common::one_route_entries();
    let admin = common::free_addr();
    let admin_arg = admin.to_string();
    let sw = common::start_lab_switch(
        &entries,
        &["--admin-addr", &admin_arg, "--forwarding", forwarding],
    );
    ns.wait_until_up(&["gen", "s1p1", "s1p2", "sink"]);
    let (_g_rx, gen) = io::open("gen", Backend::Mmsg).expect("gen");
    let (mut sink, _s_tx) = io::open("sink", Backend::Mmsg).expect("sink");
    let frame = with_udp_dst_port(transit_frame(vec![], 0), 5000);

    // Wait until the switch forwards, then start from a quiet sink.
    assert!(
        common::forwards(&*gen, &mut *sink, &frame),
        "the switch forwards nothing"
    );
    let mut bufs = vec![PacketBuf::new(); 8];
    while sink.recv(&mut bufs).expect("receive") > 0 {}

    assert_eq!(common::admin(admin, "set_port_loss 50 2"), ["ok"]);
    let lossy = deliver(gen.as_ref(), sink.as_mut(), &frame);
    let dropped = loss_drops(admin);
    assert_eq!(common::admin(admin, "set_port_loss 0 2"), ["ok"]);
    let clean = deliver(gen.as_ref(), sink.as_mut(), &frame);
    drop(sw);
    let _ = std::fs::remove_file(entries);

    // Binomial(2000, 0.5): σ ≈ 22, so ±200 is ~9σ.
    assert!(
        (FRAMES / 2 - 200..=FRAMES / 2 + 200).contains(&lossy),
        "{forwarding}: {lossy} of {FRAMES} frames crossed at 50 % loss"
    );
    assert_eq!(
        lossy as u64 + dropped,
        FRAMES as u64,
        "{forwarding}: {lossy} crossed, {dropped} counted as lost"
    );
    assert_eq!(
        clean, FRAMES,
        "{forwarding}: loss 0 must deliver every frame"
    );
}

#[test]
#[ignore = "needs root"]
fn port_loss_drops_half_when_forwarding_directly() {
    half_the_frames_cross_at_50_percent("direct");
}

#[test]
#[ignore = "needs root"]
fn port_loss_drops_half_when_forwarding_through_queues() {
    half_the_frames_cross_at_50_percent("queued");
}
