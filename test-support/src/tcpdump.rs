//! A tcpdump capture into a nanosecond pcap file: frames stamped by the
//! kernel as they pass the interface, as a user's own capture is (a capture
//! thread stamping frames when it gets to run would bunch them together on
//! a busy machine and invent bursts).

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running tcpdump; [`Tcpdump::stop`] ends it and leaves the file whole.
pub struct Tcpdump {
    child: Child,
    file: PathBuf,
}

impl Tcpdump {
    /// Starts `program` (`tcpdump`, or a command running it in a namespace:
    /// see [`crate::netns::Netns::cmd`]) on `iface` with `filter`, writing
    /// `file`; returns once it is listening.
    pub fn start(
        mut program: Command,
        iface: impl AsRef<OsStr>,
        filter: &str,
        file: &Path,
    ) -> Self {
        let mut child = program
            .arg("-i")
            .arg(iface)
            .args([
                "-n",
                "-U",
                "--immediate-mode",
                "-Z",
                "root",
                "-B",
                "32768",
                "--time-stamp-precision",
                "nano",
                "-w",
            ])
            .arg(file)
            .arg(filter)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tcpdump (apt install tcpdump)");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        loop {
            line.clear();
            let n = err.read_line(&mut line).expect("tcpdump stderr");
            assert!(n > 0, "tcpdump exited before listening");
            if line.contains("listening on") {
                break;
            }
        }
        // Keep draining stderr so tcpdump never blocks on it.
        std::thread::spawn(move || {
            let _ = err.read_to_end(&mut Vec::new());
        });
        Tcpdump {
            child,
            file: file.to_owned(),
        }
    }

    /// Stops the capture after a grace period for frames in flight and
    /// returns the file, complete.
    pub fn stop(mut self) -> PathBuf {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("signal tcpdump");
        let status = self.child.wait().expect("wait tcpdump");
        assert!(status.success(), "tcpdump: {status}");
        std::mem::take(&mut self.file)
    }
}

impl Drop for Tcpdump {
    fn drop(&mut self) {
        if !self.file.as_os_str().is_empty() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
