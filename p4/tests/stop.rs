//! The switch stopped the moment its P4Runtime port opens (a supervisor,
//! `lab down`, a test) stops cleanly, exit 0, never by SIGTERM's default
//! action.

use intpath_test_support::{daemon, switch::switch_binary};
use std::process::Command;

#[test]
fn sigterm_the_moment_the_port_opens_still_stops_cleanly() {
    daemon::stops_cleanly_once_listening(5, |addr| {
        let mut c = Command::new(switch_binary());
        c.args(["--device-id", "1", "--log-level", "warn", "--"])
            .args(["--grpc-server-addr", addr]);
        c
    });
}
