//! Stopping a daemon the moment it can be reached: a supervisor, or a
//! test, that waits for the port and then sends SIGTERM must get a clean
//! stop, never a death by the signal's default action.

use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// Knocks on `addr` without pausing until it accepts (so the signal
/// follows the bind as closely as a client can tell), then sends SIGTERM
/// to `child` and waits for it; its output.
pub fn stop_once_listening(child: Child, addr: &str) -> Output {
    let until = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < until, "{addr} never opened");
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    child.wait_with_output().expect("the daemon's exit")
}
