//! Helpers for the tests that run the `intpath-switch` binary.
#![allow(dead_code)] // each test binary uses its own part

use intpath_p4rt::client::{Client, ClientConfig, Target};
use intpath_p4rt::p4info::P4InfoIndex;
use std::net::{SocketAddr, TcpListener};
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
