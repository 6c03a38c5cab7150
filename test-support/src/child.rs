//! A child process a test waits on, with a time limit: a child that hangs
//! fails its test with what it said, instead of holding the run until CI's
//! own limit.

use std::process::{Child, Output};
use std::time::Duration;

/// The child's output (read while it runs, so a chatty child never fills
/// a pipe), or, if it outlives `limit`, a failure naming `what` with what
/// it wrote on stderr. Stopped with SIGTERM, so that a child that set
/// something up (run-local's services) still tears it down.
pub fn output_within(child: Child, limit: Duration, what: &str) -> Output {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap_or_else(|e| panic!("{what}'s output: {e}")),
        Err(_) => {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            let out = (rx.recv().unwrap_or_else(|e| panic!("{what} stops: {e}")))
                .unwrap_or_else(|e| panic!("{what}'s output: {e}"));
            panic!(
                "{what} took over {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn sh(script: &str) -> Child {
        (Command::new("sh").args(["-c", script]))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sh runs")
    }

    #[test]
    fn a_child_that_exits_in_time_gives_its_output() {
        let out = output_within(
            sh("echo said; echo warned >&2"),
            Duration::from_secs(10),
            "sh",
        );
        assert!(out.status.success());
        assert_eq!(
            (&out.stdout[..], &out.stderr[..]),
            (&b"said\n"[..], &b"warned\n"[..])
        );
    }

    #[test]
    #[should_panic(expected = "sh took over 200ms: about to hang")]
    fn a_child_that_hangs_is_stopped_and_fails_with_what_it_said() {
        output_within(
            sh("echo about to hang >&2; exec sleep 30"),
            Duration::from_millis(200),
            "sh",
        );
    }
}
