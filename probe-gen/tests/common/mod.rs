//! Test beds shared by the integration tests and the benchmark: a veth pair
//! inside a private network namespace, a tcpdump capture on it, and the
//! Kolmogorov-Smirnov statistic.
#![allow(dead_code)] // each test binary uses a different part

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// Namespaces need root; tests skip (loudly) without it.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[macro_export]
macro_rules! require_root {
    () => {
        if !common::is_root() {
            eprintln!("SKIPPED: needs root for network namespaces and veth pairs");
            return;
        }
    };
}

/// The sending end of every test bed.
pub const TX: &str = "pga";
/// The capturing end.
pub const RX: &str = "pgb";
pub const TX_IP: &str = "10.99.0.1";

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A namespace `ippg-<tag>-<pid>` holding the veth pair [`TX`] - [`RX`];
/// deleting the namespace on drop removes the pair too.
pub struct Veth {
    pub ns: String,
    /// Scratch directory for plans and captures, removed with the pair.
    pub dir: PathBuf,
}

impl Veth {
    pub fn new(tag: &str) -> Self {
        let ns = format!("ippg-{tag}-{}", std::process::id());
        let _ = Command::new("ip").args(["netns", "del", &ns]).output();
        ip(&["netns", "add", &ns]);
        let dir = std::env::temp_dir().join(&ns);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let v = Self { ns, dir };
        let ns = v.ns.as_str();
        ip(&[
            "-n", ns, "link", "add", TX, "type", "veth", "peer", "name", RX,
        ]);
        // No IPv6 means no router solicitations or DAD in the capture.
        for dev in [TX, RX] {
            let key = format!("net.ipv6.conf.{dev}.disable_ipv6=1");
            let out = v
                .cmd("sysctl")
                .args(["-qw", &key])
                .output()
                .expect("sysctl");
            assert!(out.status.success(), "sysctl {key}");
            ip(&["-n", ns, "link", "set", dev, "up"]);
        }
        ip(&["-n", ns, "addr", "add", &format!("{TX_IP}/24"), "dev", TX]);
        // For gRPC between processes inside the namespace.
        ip(&["-n", ns, "link", "set", "lo", "up"]);
        v.wait_until_up();
        v
    }

    /// Until the kernel's link watcher has seen the carrier, a device keeps
    /// the `noop` qdisc, which drops every frame while reporting success.
    fn wait_until_up(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        for dev in [TX, RX] {
            loop {
                let out = Command::new("ip")
                    .args(["-n", &self.ns, "link", "show", "dev", dev])
                    .output()
                    .expect("ip link show");
                let s = String::from_utf8_lossy(&out.stdout);
                if s.contains("state UP") && !s.contains("qdisc noop") {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{dev} never came up: {s}"
                );
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }

    /// `program` run inside the namespace.
    pub fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns, program]);
        c
    }

    /// Moves the calling thread into the namespace (only that thread: the
    /// network namespace is per thread).
    pub fn enter(&self) {
        let f = std::fs::File::open(format!("/run/netns/{}", self.ns)).expect("open netns");
        // SAFETY: `f` is an open namespace file for the whole call.
        let rc = unsafe { libc::setns(std::os::fd::AsRawFd::as_raw_fd(&f), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
    }

    /// Packets the receiving end has taken in so far.
    pub fn rx_packets(&self) -> u64 {
        let out = self
            .cmd("cat")
            .arg(format!("/sys/class/net/{RX}/statistics/rx_packets"))
            .output()
            .expect("read rx_packets");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("a counter")
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A tcpdump on [`RX`] writing a nanosecond pcap.
pub struct Capture {
    child: Child,
    file: PathBuf,
}

/// One captured frame and its kernel receive time.
pub struct Captured {
    pub ts_ns: u64,
    pub data: Vec<u8>,
}

impl Capture {
    /// Starts tcpdump with `filter` and returns once it is listening.
    pub fn start(v: &Veth, filter: &str) -> Self {
        let file = v.dir.join("capture.pcap");
        let mut child = v
            .cmd("tcpdump")
            .args([
                "-i",
                RX,
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
            .arg(&file)
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
        Self { child, file }
    }

    /// Stops the capture (after a grace period for frames in flight) and
    /// returns what it saw.
    pub fn finish(mut self) -> Vec<Captured> {
        std::thread::sleep(std::time::Duration::from_millis(300));
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let status = self.child.wait().expect("wait tcpdump");
        assert!(status.success(), "tcpdump: {status}");
        let bytes = std::fs::read(&self.file).expect("read pcap");
        parse_pcap(&bytes)
    }
}

fn parse_pcap(b: &[u8]) -> Vec<Captured> {
    assert!(b.len() >= 24, "pcap without header");
    assert_eq!(
        &b[..4],
        &0xa1b23c4du32.to_le_bytes(),
        "not a nanosecond pcap"
    );
    let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= b.len() {
        let ts_ns = u64::from(u32_at(at)) * 1_000_000_000 + u64::from(u32_at(at + 4));
        let caplen = u32_at(at + 8) as usize;
        let data = b[at + 16..at + 16 + caplen].to_vec();
        out.push(Captured { ts_ns, data });
        at += 16 + caplen;
    }
    out
}

/// Kolmogorov-Smirnov distance between the sample and Exp(`rate`).
pub fn ks_exponential(samples: &[f64], rate: f64) -> f64 {
    let mut x = samples.to_vec();
    x.sort_by(f64::total_cmp);
    let n = x.len() as f64;
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            let f = 1.0 - (-rate * v).exp();
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

/// Critical KS distance for `n` samples at significance 0.001.
pub fn ks_critical_0001(n: usize) -> f64 {
    1.95 / (n as f64).sqrt()
}

/// A plan with paths 3 and 4 from s1 and path 5 from s2.
pub fn write_plan(v: &Veth) -> PathBuf {
    let f = v.dir.join("plan.json");
    std::fs::write(
        &f,
        r#"{"topology":"t","algo":"euler","paths":[
            {"id":3,"nodes":["s1","s2"],"egress_ports":[2]},
            {"id":4,"nodes":["s1","s3","s2"],"egress_ports":[3,1]},
            {"id":5,"nodes":["s2","s1"],"egress_ports":[1]}],
            "stats":{"paths":3,"lower_bound":3,"max_len":2,"mean_len":1.3,"len_variance":0.2,"plan_ms":0.1}}"#,
    )
    .expect("write plan");
    f
}

pub const BIN: &str = env!("CARGO_BIN_EXE_probe-gen");

/// Runs probe-gen, expects success, returns its stderr.
pub fn run_ok(c: &mut Command) -> String {
    let out = c.output().expect("run probe-gen");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "probe-gen failed: {err}");
    err
}

/// `probe-gen send` on the test bed's sending end, towards the collector
/// 10.99.0.9, with more arguments (split at spaces).
pub fn send(v: &Veth, plan: &std::path::Path, args: &str) -> Command {
    let mut c = v.cmd(BIN);
    c.args(["send", "--iface", TX, "--collector", "10.99.0.9", "--plan"])
        .arg(plan)
        .args(args.split_whitespace());
    c
}

/// The number after `key` in the final line (`... sent N, errors M ...`).
pub fn final_number(stderr: &str, key: &str) -> u64 {
    let last = stderr
        .lines()
        .rev()
        .find(|l| l.contains(" after "))
        .unwrap_or_else(|| panic!("no final line in {stderr}"));
    let at = last.find(key).unwrap_or_else(|| panic!("{key} in {last}")) + key.len();
    last[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {key} in {last}"))
}

/// The `sent N, errors M` of the final line.
pub fn final_counts(stderr: &str) -> (u64, u64) {
    (
        final_number(stderr, "sent "),
        final_number(stderr, "errors "),
    )
}
