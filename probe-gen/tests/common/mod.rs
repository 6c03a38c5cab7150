//! Test beds shared by the integration tests and the benchmark: a veth pair
//! inside a private network namespace, a tcpdump capture on it, and the
//! Kolmogorov-Smirnov statistic.
#![allow(dead_code)] // each test binary uses a different part

use intpath_test_support::netns::Netns;
use intpath_test_support::tcpdump::Tcpdump;
use intpath_test_support::{tempdir, TempDir};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The sending end of every test bed.
pub const TX: &str = "pga";
/// The capturing end.
pub const RX: &str = "pgb";
pub const TX_IP: &str = "10.99.0.1";

/// A namespace `ippg-<tag>-<pid>` holding the veth pair [`TX`] - [`RX`],
/// with a scratch directory for plans and captures; both go on drop.
pub struct Veth {
    ns: Netns,
    dir: TempDir,
}

impl Veth {
    pub fn new(tag: &str) -> Self {
        let ns = Netns::new(&format!("ippg-{tag}"));
        ns.veth(TX, RX);
        ns.ip(&["addr", "add", &format!("{TX_IP}/24"), "dev", TX]);
        ns.wait_until_up(&[TX, RX]);
        let dir = tempdir().expect("scratch dir");
        Self { ns, dir }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// The test bed is its namespace plus the pair and the scratch directory.
impl Deref for Veth {
    type Target = Netns;
    fn deref(&self) -> &Netns {
        &self.ns
    }
}

/// A tcpdump on [`RX`] writing a nanosecond pcap.
pub struct Capture(Tcpdump);

/// One captured frame and its kernel receive time.
pub struct Captured {
    pub ts_ns: u64,
    pub data: Vec<u8>,
}

impl Capture {
    /// Starts tcpdump with `filter` and returns once it is listening.
    pub fn start(v: &Veth, filter: &str) -> Self {
        let file = v.dir().join("capture.pcap");
        Capture(Tcpdump::start(v.cmd("tcpdump"), RX, filter, &file))
    }

    /// Stops the capture (after a grace period for frames in flight) and
    /// returns what it saw.
    pub fn finish(self) -> Vec<Captured> {
        let file = self.0.stop();
        let bytes = std::fs::read(&file).expect("read pcap");
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
    let f = v.dir().join("plan.json");
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
