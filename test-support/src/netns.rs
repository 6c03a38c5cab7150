//! The network lab for root-only tests: a private network namespace with
//! veth pairs, deleted on drop (also when the test panics), so that real
//! frames cross real interfaces without touching the host's network.
//! Tests using it are `#[ignore = "needs root"]`; the test command runs
//! them with `--include-ignored`.

use nix::sched::{setns, CloneFlags};
use nix::unistd::geteuid;
use std::ffi::OsStr;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `ip args…` and panics with its stderr if it fails.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("ip(8) runs (apt install iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace `<prefix>-<pid>`, deleted with every veth end in it
/// when dropped.
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates the namespace (replacing a stale one of the same name) with
    /// loopback up, for gRPC between processes inside it, and IPv6 off, so
    /// no router solicitations or DAD frames reach a capture.
    pub fn new(prefix: &str) -> Self {
        assert!(
            geteuid().is_root(),
            "{prefix}: network namespaces and veth pairs need root"
        );
        let name = format!("{prefix}-{}", std::process::id());
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        ip(&["netns", "add", &name]);
        let ns = Netns { name };
        for key in ["all", "default"] {
            ns.run(&[
                "sysctl",
                "-qw",
                &format!("net.ipv6.conf.{key}.disable_ipv6=1"),
            ]);
        }
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip -n <ns> args…`.
    pub fn ip(&self, args: &[&str]) {
        let mut all = vec!["-n", &self.name];
        all.extend_from_slice(args);
        ip(&all);
    }

    /// A veth pair `a` - `b` inside the namespace, both ends up.
    pub fn veth(&self, a: &str, b: &str) {
        self.ip(&["link", "add", a, "type", "veth", "peer", "name", b]);
        for dev in [a, b] {
            self.ip(&["link", "set", dev, "up"]);
        }
    }

    /// A veth pair with `inside` in the namespace and `outside` in the
    /// caller's, both up; deleting the namespace deletes the pair.
    pub fn veth_out(&self, inside: &str, outside: &str) {
        let _ = Command::new("ip").args(["link", "del", outside]).output();
        ip(&[
            "link", "add", outside, "type", "veth", "peer", "name", inside,
        ]);
        ip(&["link", "set", inside, "netns", &self.name]);
        self.ip(&["link", "set", inside, "up"]);
        ip(&["link", "set", outside, "up"]);
    }

    /// Waits until each device has its carrier: until the kernel's link
    /// watcher has seen it, a device keeps the `noop` qdisc, which drops
    /// every frame while reporting success.
    pub fn wait_until_up(&self, devs: &[&str]) {
        let deadline = Instant::now() + Duration::from_secs(10);
        for dev in devs {
            loop {
                let out = Command::new("ip")
                    .args(["-n", &self.name, "link", "show", "dev", dev])
                    .output()
                    .expect("ip link show");
                let s = String::from_utf8_lossy(&out.stdout);
                if s.contains("state UP") && !s.contains("qdisc noop") {
                    break;
                }
                assert!(Instant::now() < deadline, "{dev} never came up: {s}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// `program` to be run inside the namespace.
    pub fn cmd(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }

    /// Runs `cmd…` inside the namespace and panics if it fails.
    pub fn run(&self, cmd: &[&str]) {
        let mut args = vec!["netns", "exec", &self.name];
        args.extend_from_slice(cmd);
        ip(&args);
    }

    /// Packets `dev` has received so far.
    pub fn rx_packets(&self, dev: &str) -> u64 {
        let out = self
            .cmd("cat")
            .arg(format!("/sys/class/net/{dev}/statistics/rx_packets"))
            .output()
            .expect("read rx_packets");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("a counter")
    }

    /// Moves the calling thread (and the processes it starts) into the
    /// namespace; other threads stay where they are.
    pub fn enter(&self) {
        let f = std::fs::File::open(format!("/run/netns/{}", self.name)).expect("open netns");
        setns(&f, CloneFlags::CLONE_NEWNET).expect("setns into the test namespace");
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}
