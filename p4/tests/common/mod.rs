//! Helpers for the tests that run the `intpath-switch` binary.
#![allow(dead_code)] // each test binary uses its own part

use intpath_p4rt::client::{Client, ClientConfig, Target};
use intpath_p4rt::p4info::P4InfoIndex;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A switch process, killed when dropped.
pub struct SwitchProcess {
    pub child: Child,
    pub grpc: SocketAddr,
    pub device_id: u64,
}

impl SwitchProcess {
    /// What the kernel says of the process (`S (sleeping)`, `Z (zombie)`:
    /// exited), or that it is gone: for the message of a failed connect.
    pub fn state(&self) -> String {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()));
        (status.ok())
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("State:"))?;
                Some(line.trim_start_matches("State:").trim().to_owned())
            })
            .unwrap_or_else(|| "gone".into())
    }
}

impl Drop for SwitchProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nobody listens on now (in the calling thread's namespace).
pub fn free_addr() -> SocketAddr {
    (intpath_test_support::free_addr().parse()).expect("a socket address")
}

/// Starts `intpath-switch` with `args` before `--` and waits for P4Runtime.
pub fn start_switch(device_id: u64, args: &[String]) -> SwitchProcess {
    let grpc = free_addr();
    let child = Command::new(env!("CARGO_BIN_EXE_intpath-switch"))
        .arg("--device-id")
        .arg(device_id.to_string())
        .args(args)
        .arg("--")
        .arg("--grpc-server-addr")
        .arg(grpc.to_string())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .spawn()
        .expect("intpath-switch starts");
    let mut sw = SwitchProcess {
        child,
        grpc,
        device_id,
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(grpc).is_err() {
        if let Ok(Some(status)) = sw.child.try_wait() {
            panic!("intpath-switch exited early: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "intpath-switch did not listen on {grpc}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    sw
}

pub fn p4info_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sr_int.p4info.txtpb")
}

pub fn p4info_index() -> Arc<P4InfoIndex> {
    let info = intpath_p4rt::p4info::load(&p4info_path()).expect("p4/sr_int.p4info.txtpb");
    Arc::new(P4InfoIndex::new(info).expect("indexable P4Info"))
}

/// A primary P4Runtime session with the switch, using the repository's P4Info.
pub async fn connect(sw: &SwitchProcess, election_id: u128) -> Client {
    let mut config = ClientConfig::new(Target {
        name: format!("s{}", sw.device_id),
        addr: sw.grpc.to_string(),
        device_id: sw.device_id,
    });
    config.election_id = election_id;
    let mut client = (Client::connect(config).await)
        .unwrap_or_else(|e| panic!("P4Runtime connect: {e}; the switch: {}", sw.state()));
    client.use_p4info(p4info_index());
    client
}

/// User + system CPU seconds a process has used so far (from
/// `/proc/PID/stat`; the kernel's work on its system calls included).
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the whole line.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

/// `gen --[1] switch [2]-- sink`: two veth pairs in a fresh namespace that
/// the calling thread enters (so will the switch it starts).
pub fn gen_sink_lab(prefix: &str) -> intpath_test_support::netns::Netns {
    let ns = intpath_test_support::netns::Netns::new(prefix);
    ns.veth("gen", "s1p1");
    ns.veth("s1p2", "sink");
    ns.enter();
    ns
}

/// The switch of [`gen_sink_lab`], with `entries` installed and `extra`
/// options.
pub fn start_lab_switch(entries: &std::path::Path, extra: &[&str]) -> SwitchProcess {
    let mut args: Vec<String> = ["-i", "1@s1p1", "-i", "2@s1p2", "--entries"]
        .map(String::from)
        .to_vec();
    args.push(entries.display().to_string());
    args.extend(extra.iter().map(|a| a.to_string()));
    start_switch(1, &args)
}

/// Sends `frame` from `gen` until a frame of its length reaches `sink`, for
/// at most 5 s: whether the lab's switch forwards.
pub fn forwards(
    gen: &dyn intpath_switch::io::FrameTx,
    sink: &mut dyn intpath_switch::io::FrameRx,
    frame: &[u8],
) -> bool {
    let mut bufs = vec![intpath_switch::packet::PacketBuf::new(); 8];
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        gen.send(&[frame]).expect("send");
        let n = sink.recv(&mut bufs).expect("receive");
        if bufs[..n].iter().any(|b| b.data().len() == frame.len()) {
            return true;
        }
    }
    false
}

/// A temporary `--entries` file: switch id 1, and 10.0.9.0/24 out of port 2
/// (where the sample frames of `probe_frames` go).
pub fn one_route_entries() -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "ipsw-entries-{}-{:?}.json",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(
        &path,
        r#"[{"table": "SrIntIngress.switch_config", "default": true,
             "action": "SrIntIngress.set_switch_id", "params": {"switch_id": "0x1"}},
            {"table": "SrIntIngress.ipv4_lpm",
             "match": [{"field": "hdr.ipv4.dst_addr", "lpm": "0x0a000900", "prefix_len": 24}],
             "action": "SrIntIngress.ipv4_forward",
             "params": {"dst_mac": "0x00000a000909", "port": "0x2"}}]"#,
    )
    .expect("entries file");
    path
}

/// One command to a switch's admin interface: its reply lines, up to and
/// including the closing `ok`, `end` or `error: ...`.
pub fn admin(addr: SocketAddr, command: &str) -> Vec<String> {
    let mut s = TcpStream::connect(addr).expect("admin connection");
    writeln!(s, "{command}").unwrap();
    let mut reader = BufReader::new(s);
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let line = line.trim_end().to_string();
        let last = line == "ok" || line == "end" || line.starts_with("error");
        lines.push(line);
        if last {
            break;
        }
    }
    lines
}

/// The most resident memory a process has had, in bytes (`VmHWM` of
/// `/proc/PID/status`): a request's cost even after its memory is freed.
pub fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in kB");
    kib * 1024
}
