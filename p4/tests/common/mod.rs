//! Helpers for the tests that run the `intpath-switch` binary.
#![allow(dead_code)] // each test binary uses its own part

use intpath_p4rt::client::{Client, ClientConfig, Target};
use intpath_p4rt::p4info::P4InfoIndex;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
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

impl Drop for SwitchProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nobody listens on now (in the calling thread's namespace).
pub fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free local port")
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
    let mut client = Client::connect(config).await.expect("P4Runtime connect");
    client.use_p4info(p4info_index());
    client
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A network namespace, deleted (with its veths) when dropped.
pub struct Netns(pub String);

pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip(8) runs");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Netns {
    pub fn create(name: String) -> Self {
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        ip(&["netns", "add", &name]);
        let ns = Netns(name);
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
        ip(&["-n", &ns.0, "link", "set", "lo", "up"]);
        ns
    }

    pub fn exec(&self, cmd: &[&str]) {
        let mut args = vec!["netns", "exec", &self.0];
        args.extend_from_slice(cmd);
        ip(&args);
    }

    pub fn veth(&self, a: &str, b: &str) {
        ip(&[
            "-n", &self.0, "link", "add", a, "type", "veth", "peer", "name", b,
        ]);
        for i in [a, b] {
            ip(&["-n", &self.0, "link", "set", i, "up"]);
        }
    }

    /// Moves the calling thread (and processes it starts) into the namespace.
    pub fn enter(&self) {
        let f = std::fs::File::open(format!("/var/run/netns/{}", self.0)).expect("netns file");
        // SAFETY: setns on a namespace fd only changes this thread's namespace.
        let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}
