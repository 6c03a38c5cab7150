//! Running reference switches for tests and benches: `intpath-switch`
//! processes without data ports, serving P4Runtime on loopback.
#![allow(dead_code)] // each test binary uses its own part

use intpath_core::switch_map::{SwitchEntry, SwitchMap};
use intpath_p4rt::client::{Client, ClientConfig, Target};
use intpath_p4rt::deploy;
use intpath_p4rt::p4info::P4InfoIndex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `target/<profile>/intpath-switch`, next to the running test's `deps/`.
/// `cargo test --workspace` builds it; alone: `cargo build -p intpath-switch`
/// (with `--release` for benches).
pub fn switch_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let bin = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target dir")
        .join("intpath-switch");
    assert!(
        bin.exists(),
        "{} is missing: build it with `cargo build -p intpath-switch` (--release for benches)",
        bin.display()
    );
    bin
}

/// A loopback address nothing listens on (just freed).
pub fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

/// One switch process, killed on drop.
pub struct SwitchProc {
    child: Option<Child>,
    pub addr: String,
    pub device_id: u64,
}

impl SwitchProc {
    /// Starts the switch and waits until it listens.
    pub fn start(device_id: u64, addr: String) -> Self {
        let child = Command::new(switch_binary())
            .args(["--device-id", &device_id.to_string(), "--cpu-port", "255"])
            .args(["--log-level", "warn", "--", "--grpc-server-addr", &addr])
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn intpath-switch");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "intpath-switch did not listen on {addr}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        SwitchProc {
            child: Some(child),
            addr,
            device_id,
        }
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn config(&self, name: &str, election_id: u128) -> ClientConfig {
        let mut c = ClientConfig::new(Target {
            name: name.to_owned(),
            addr: self.addr.clone(),
            device_id: self.device_id,
        });
        c.election_id = election_id;
        c.connect_timeout = Duration::from_secs(2);
        c.rpc_timeout = Duration::from_secs(5);
        c
    }
}

impl Drop for SwitchProc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Named switches with their switch map.
pub struct Fleet {
    pub procs: BTreeMap<String, SwitchProc>,
    pub map: SwitchMap,
}

impl Fleet {
    /// `(name, device id)` per switch, each on a fresh loopback port.
    pub fn start(switches: impl IntoIterator<Item = (String, u64)>) -> Self {
        let mut fleet = Fleet {
            procs: BTreeMap::new(),
            map: SwitchMap { switches: vec![] },
        };
        for (name, device_id) in switches {
            let p = SwitchProc::start(device_id, free_addr());
            fleet.map.switches.push(SwitchEntry {
                name: name.clone(),
                grpc_addr: p.addr.clone(),
                device_id,
                cpu_port: 255,
            });
            fleet.procs.insert(name, p);
        }
        fleet
    }

    pub fn kill(&mut self, name: &str) {
        if let Some(p) = self.procs.get_mut(name) {
            p.kill();
        }
    }

    /// Starts a killed switch again on its address.
    pub fn restart(&mut self, name: &str) {
        let e = self.map.get(name).expect("switch in map").clone();
        self.procs
            .insert(name.to_owned(), SwitchProc::start(e.device_id, e.grpc_addr));
    }
}

pub fn sr_int() -> Arc<P4InfoIndex> {
    Arc::new(deploy::sr_int_p4info().expect("built-in P4Info"))
}

/// Every entry each switch holds, its switch_config default included,
/// rendered by name.
pub async fn read_back(
    map: &SwitchMap,
    ix: &Arc<P4InfoIndex>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for s in &map.switches {
        let mut c = Client::connect_observer(ClientConfig::new(Target {
            name: s.name.clone(),
            addr: s.grpc_addr.clone(),
            device_id: s.device_id,
        }))
        .await
        .unwrap();
        c.use_p4info(ix.clone());
        let mut entries: BTreeSet<String> = c
            .read_table_entries(None)
            .await
            .unwrap()
            .iter()
            .map(|e| ix.describe_entry(e))
            .collect();
        let d = c
            .read_default_entry(deploy::SWITCH_CONFIG)
            .await
            .unwrap()
            .unwrap();
        entries.insert(ix.describe_entry(&d));
        out.insert(s.name.clone(), entries);
    }
    out
}

/// What the intents imply, in the form of [`read_back`].
pub fn implied(
    ix: &P4InfoIndex,
    intents: &BTreeMap<String, deploy::SwitchIntent>,
) -> BTreeMap<String, BTreeSet<String>> {
    intents
        .iter()
        .map(|(n, i)| {
            let e = deploy::entries(ix, i).unwrap();
            (n.clone(), e.iter().map(|e| ix.describe_entry(e)).collect())
        })
        .collect()
}
