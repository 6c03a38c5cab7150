//! Reference switches for tests: `intpath-switch` processes serving
//! P4Runtime on loopback (no data ports unless asked), killed on drop.

use intpath_core::switch_map::{SwitchEntry, SwitchMap};
use intpath_p4rt::client::{ClientConfig, Target};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The `intpath-switch` binary for the running test's profile: the one
/// next to the test (`cargo test --workspace` and `cargo build -p
/// intpath-switch` put it there), else one built once into
/// `target/test-support/` (so `cargo test -p CRATE` works alone; cargo
/// holds the test's own build directory locked while tests run). The p4
/// crate's own tests pass `env!("CARGO_BIN_EXE_intpath-switch")` instead.
pub fn switch_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("own path");
        // target/<profile>/deps/<test> -> target/<profile>
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test binary in target/<profile>/deps");
        let sibling = profile_dir.join("intpath-switch");
        if sibling.exists() {
            return sibling;
        }
        let name = profile_dir.file_name().and_then(|n| n.to_str());
        let (profile, out_dir) = match name {
            Some("debug") | None => ("dev", "debug"),
            Some(other) => (other, other),
        };
        let target_dir = profile_dir
            .parent()
            .expect("target dir")
            .join("test-support");
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let out = Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "-p",
                "intpath-switch",
                "--bin",
                "intpath-switch",
            ])
            .args(["--profile", profile, "--manifest-path"])
            .arg(&workspace)
            .env("CARGO_TARGET_DIR", &target_dir)
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "cargo build -p intpath-switch: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        target_dir.join(out_dir).join("intpath-switch")
    })
}

/// One switch process, killed on drop.
pub struct SwitchProc {
    child: Option<Child>,
    pub addr: String,
    pub device_id: u64,
}

impl SwitchProc {
    /// Starts [`switch_binary`] on `addr` and waits until it listens.
    pub fn start(device_id: u64, addr: String) -> Self {
        Self::start_with(switch_binary(), device_id, addr, &[])
    }

    /// Starts `bin` with `args` (before `--`) and waits until it listens.
    pub fn start_with(bin: &Path, device_id: u64, addr: String, args: &[&str]) -> Self {
        Self::spawn(bin, device_id, addr, args, &[])
    }

    /// Starts [`switch_binary`] serving P4Runtime over TLS with `certs`'
    /// server certificate, requiring a client certificate of their CA
    /// (simple_switch_grpc's target options).
    pub fn start_tls(device_id: u64, addr: String, certs: &crate::tls::Certs) -> Self {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let target = [
            "--grpc-server-ssl".to_owned(),
            "--grpc-server-cert".to_owned(),
            path(&certs.server_cert),
            "--grpc-server-key".to_owned(),
            path(&certs.server_key),
            "--grpc-server-cacert".to_owned(),
            path(&certs.ca),
            "--grpc-server-with-client-auth".to_owned(),
        ];
        let target: Vec<&str> = target.iter().map(String::as_str).collect();
        Self::spawn(switch_binary(), device_id, addr, &[], &target)
    }

    fn spawn(bin: &Path, device_id: u64, addr: String, args: &[&str], target: &[&str]) -> Self {
        let child = Command::new(bin)
            .args(["--device-id", &device_id.to_string(), "--cpu-port", "255"])
            .args(args)
            .args(["--log-level", "warn", "--", "--grpc-server-addr", &addr])
            .args(target)
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()));
        let mut proc = SwitchProc {
            child: Some(child),
            addr,
            device_id,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&proc.addr).is_err() {
            if let Some(Ok(Some(status))) = proc.child.as_mut().map(Child::try_wait) {
                panic!("intpath-switch exited early: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "intpath-switch did not listen on {}",
                proc.addr
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        proc
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A client configuration for this switch with short timeouts.
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
            let p = SwitchProc::start(device_id, crate::free_addr());
            fleet.map.switches.push(SwitchEntry {
                name: name.clone(),
                grpc_addr: p.addr.clone(),
                device_id,
                cpu_port: 255,
                admin_addr: None,
                thrift_port: None,
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

    /// The switch map as JSON, for the command-line tools.
    pub fn map_json(&self) -> String {
        serde_json::to_string(&self.map).expect("a switch map serialises")
    }
}
