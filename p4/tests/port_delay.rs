//! A port delay set at run time through the admin interface
//! (`set_port_delay`): with 80 ms on the egress port a frame crosses the
//! switch no sooner than 80 ms after it was sent, every frame arrives, in
//! order, and 0 restores prompt delivery.
//!
//! ```text
//! gen --[1] switch [2]-- sink
//! ```
//! Needs root (network namespaces): ignored unless run with `--include-ignored`.

mod common;

use intpath_switch::io::{self, Backend, FrameRx, FrameTx};
use intpath_switch::packet::PacketBuf;
use intpath_test_support::probe_frames::{transit_frame, with_udp_dst_port};
use std::time::{Duration, Instant};

/// Sends `n` frames, each with its index in its last byte, and returns
/// each arrival's delay after the send and the indices in arrival order.
fn crossing(
    gen: &dyn FrameTx,
    sink: &mut dyn FrameRx,
    frame: &[u8],
    n: u8,
) -> (Vec<Duration>, Vec<u8>) {
    let mut bufs = vec![PacketBuf::new(); 16];
    let (mut delays, mut order) = (Vec::new(), Vec::new());
    for i in 0..n {
        let mut f = frame.to_vec();
        *f.last_mut().expect("a frame") = i;
        let sent = Instant::now();
        gen.send(&[&f]).expect("send");
        let deadline = sent + Duration::from_secs(2);
        'wait: while Instant::now() < deadline {
            let n = sink.recv(&mut bufs).expect("receive");
            for b in &bufs[..n] {
                if b.data().len() == f.len() {
                    delays.push(sent.elapsed());
                    order.push(*b.data().last().expect("a frame"));
                    break 'wait;
                }
            }
        }
    }
    (delays, order)
}

#[test]
#[ignore = "needs root"]
fn a_port_delay_holds_every_frame_and_keeps_their_order() {
    let ns = common::gen_sink_lab("ipsw-delay");
    let entries = common::one_route_entries();
    let admin = common::free_addr();
    let admin_arg = admin.to_string();
    let sw = common::start_lab_switch(&entries, &["--admin-addr", &admin_arg]);
    ns.wait_until_up(&["gen", "s1p1", "s1p2", "sink"]);
    let (_g_rx, gen) = io::open("gen", Backend::Mmsg).expect("gen");
    let (mut sink, _s_tx) = io::open("sink", Backend::Mmsg).expect("sink");
    let frame = with_udp_dst_port(transit_frame(vec![], 0), 5000);
    assert!(
        common::forwards(&*gen, &mut *sink, &frame),
        "the switch forwards nothing"
    );
    let mut bufs = vec![PacketBuf::new(); 8];
    while sink.recv(&mut bufs).expect("receive") > 0 {}

    assert_eq!(common::admin(admin, "set_port_delay 80 2"), ["ok"]);
    let shown = common::admin(admin, "show_queues");
    assert!(
        shown
            .iter()
            .any(|l| l.starts_with("port 2 ") && l.ends_with("delay_ms 80")),
        "{shown:?}"
    );
    let (delayed, order) = crossing(gen.as_ref(), sink.as_mut(), &frame, 10);
    assert_eq!(common::admin(admin, "set_port_delay 0 2"), ["ok"]);
    let (prompt, _) = crossing(gen.as_ref(), sink.as_mut(), &frame, 10);
    drop(sw);
    let _ = std::fs::remove_file(entries);

    assert_eq!(order, (0..10).collect::<Vec<u8>>(), "every frame, in order");
    assert!(
        delayed.iter().all(|d| *d >= Duration::from_millis(80)),
        "{delayed:?}"
    );
    assert_eq!(prompt.len(), 10, "delay 0 delivers every frame");
    let mut sorted = prompt.clone();
    sorted.sort();
    assert!(
        sorted[5] < Duration::from_millis(40),
        "without a delay the median crossing took {:?}",
        sorted[5]
    );
}
