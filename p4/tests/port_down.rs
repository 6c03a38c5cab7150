//! A port whose interface goes down: the switch neither spins on the error
//! (an idle switch stays idle) nor stops forwarding once the link is back.
//!
//! ```text
//! gen --[1] switch [2]-- sink
//! ```
//! Needs root (network namespaces): ignored unless run with `--include-ignored`.

mod common;

use intpath_switch::io::{self, Backend};
use intpath_test_support::probe_frames::{transit_frame, with_udp_dst_port};
use std::time::Duration;

#[test]
#[ignore = "needs root"]
fn a_port_going_down_costs_no_cpu_and_forwarding_resumes() {
    let ns = common::gen_sink_lab("ipsw-down");
    let entries = common::one_route_entries();
    let sw = common::start_lab_switch(&entries, &[]);
    ns.ip(&["link", "set", "s1p1", "down"]);
    ns.ip(&["link", "set", "s1p2", "down"]);
    let before = common::cpu_seconds(sw.child.id());
    std::thread::sleep(Duration::from_secs(2));
    let cpu = common::cpu_seconds(sw.child.id()) - before;
    assert!(cpu < 0.2, "{cpu} CPU-seconds in 2 s with both ports down");

    ns.ip(&["link", "set", "s1p1", "up"]);
    ns.ip(&["link", "set", "s1p2", "up"]);
    ns.wait_until_up(&["gen", "s1p1", "s1p2", "sink"]);
    let (_g_rx, gen) = io::open("gen", Backend::Mmsg).expect("gen");
    let (mut sink, _s_tx) = io::open("sink", Backend::Mmsg).expect("sink");
    let frame = with_udp_dst_port(transit_frame(vec![], 0), 5000);
    let forwarded = common::forwards(&*gen, &mut *sink, &frame);
    drop(sw);
    let _ = std::fs::remove_file(entries);
    assert!(forwarded, "nothing forwarded after the ports came back up");
}
