//! Stopping a daemon the moment it can be reached: a supervisor, or a
//! test, that waits for the port and then sends SIGTERM must get a clean
//! stop, never a death by the signal's default action.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Below the kernel's ephemeral range (32768 and up on Linux) and apart
/// from [`crate::free_addr`]'s ports, so no other test can take the port
/// between its choice and the daemon's bind: knocking on another test's
/// listener would stop the daemon before it could catch anything.
const PORTS: std::ops::Range<u16> = 20_000..32_000;

/// A loopback address on a free port of [`PORTS`].
fn quiet_addr() -> String {
    crate::free_addr_in(PORTS)
}

/// Starts `times` daemons in turn, each `command(addr)` on a free loopback
/// address, and stops each the moment `addr` accepts: knocking without
/// pausing until it does (so the signal follows the bind as closely as a
/// client can tell), then SIGTERM. Each must exit 0; their outputs. The
/// window is short, hence several tries.
pub fn stops_cleanly_once_listening(
    times: usize,
    command: impl Fn(&str) -> Command,
) -> Vec<Output> {
    (0..times)
        .map(|_| {
            let addr = quiet_addr();
            let child = command(&addr)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the daemon starts");
            let until = Instant::now() + Duration::from_secs(20);
            while std::net::TcpStream::connect(&addr).is_err() {
                assert!(Instant::now() < until, "{addr} never opened");
            }
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
            let out = child.wait_with_output().expect("the daemon's exit");
            let log = String::from_utf8_lossy(&out.stderr);
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{addr}: {}: {said} {log}", out.status);
            out
        })
        .collect()
}
