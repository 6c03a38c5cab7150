//! The switch stopped the moment its P4Runtime port opens (a supervisor,
//! `lab down`, a test) stops cleanly, exit 0, never by SIGTERM's default
//! action; tried a few times, since the window is short.

use intpath_test_support::{daemon, free_addr, switch::switch_binary};
use std::process::{Command, Stdio};

#[test]
fn sigterm_the_moment_the_port_opens_still_stops_cleanly() {
    for _ in 0..5 {
        let addr = free_addr();
        let child = Command::new(switch_binary())
            .args(["--device-id", "1", "--log-level", "warn", "--"])
            .args(["--grpc-server-addr", &addr])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = daemon::stop_once_listening(child, &addr);
        assert!(
            out.status.success(),
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
