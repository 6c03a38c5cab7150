//! A ring of reference switches in a network namespace, for the watch
//! tests: switches s1..sN joined by veth pairs (port 2 clockwise, port 3
//! anticlockwise), host hK on port 1 of the switches given, the
//! collector's host hc on port 4 of s1. Every process runs inside the
//! namespace and is stopped (SIGTERM, then SIGKILL) before the namespace
//! and scratch directory go.

use intpath_test_support::netns::Netns;
use intpath_test_support::{tempdir, TempDir};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const COLLECTOR_IP: &str = "10.0.0.100";

pub struct Lab {
    pub ns: Netns,
    dir: TempDir,
    /// Every process started, with its log name.
    children: Vec<(String, Child)>,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for (_, c) in &mut self.children {
            // SIGTERM first, so the collector flushes (its output helps a
            // failing test); SIGKILL whatever is left.
            let _ = Command::new("kill").arg(c.id().to_string()).status();
        }
        std::thread::sleep(Duration::from_millis(300));
        for (_, c) in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One of the workspace's binaries, next to `intpath`.
pub fn bin(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_BIN_EXE_intpath")).with_file_name(name);
    assert!(
        p.exists(),
        "{} missing: cargo build --workspace",
        p.display()
    );
    p
}

impl Lab {
    pub fn new(prefix: &str) -> Self {
        Lab {
            ns: Netns::new(prefix),
            dir: tempdir().unwrap(),
            children: Vec::new(),
        }
    }

    pub fn file(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    /// `program args…` inside the namespace, output to `<log>.out/.err`.
    pub fn spawn(&mut self, program: &Path, args: &[&str], log: &str) {
        let out = std::fs::File::create(self.file(&format!("{log}.out"))).unwrap();
        let err = std::fs::File::create(self.file(&format!("{log}.err"))).unwrap();
        let child = self
            .ns
            .cmd(program)
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("ip netns exec");
        self.children.push((log.to_owned(), child));
    }

    /// Kills the processes started with these log names (switches: `sN`)
    /// at once, then reaps them.
    #[allow(dead_code)] // not every test binary including this kills one
    pub fn kill(&mut self, logs: &[String]) {
        let (mut gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.children)
            .into_iter()
            .partition(|(l, _)| logs.contains(l));
        self.children = kept;
        for (_, c) in &mut gone {
            let _ = c.kill();
        }
        for (_, c) in &mut gone {
            let _ = c.wait();
        }
    }

    pub fn run(&self, program: &Path, args: &[&str]) -> Output {
        let o = self
            .ns
            .cmd(program)
            .args(args)
            .output()
            .expect("ip netns exec");
        assert!(
            o.status.success(),
            "{} {}: {}",
            program.display(),
            args.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }

    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap_or_default()
    }

    pub fn wait_until(&self, what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while !ok() {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}\nwatch:\n{}\ncollector:\n{}",
                self.log("watch.err"),
                self.log("collector.err")
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Builds the ring of `switches` with hosts on `hosted`, writes its
    /// topology (`ring.json`) and switch map (`switches.json`), starts the
    /// switches (gRPC on 127.0.0.1:`grpc_base`+N inside the namespace) and
    /// waits until they answer. Returns (topology, map) files.
    pub fn ring(&mut self, switches: u16, hosted: &[u16], grpc_base: u16) -> (String, String) {
        let topo = self.file("ring.json");
        std::fs::write(&topo, ring_topology(switches, hosted).to_string()).unwrap();
        for n in 1..=switches {
            let next = n % switches + 1;
            self.ns.veth(&format!("s{n}-e2"), &format!("s{next}-e3"));
            if hosted.contains(&n) {
                self.ns.veth(&format!("h{n}-e0"), &format!("s{n}-e1"));
            }
        }
        self.ns.veth("hc-e0", "s1-e4");
        let mut map = Vec::new();
        for n in 1..=switches {
            let addr = format!("127.0.0.1:{}", grpc_base + n);
            let mut args = vec!["--device-id".to_owned(), n.to_string()];
            let mut ports = vec![2, 3];
            if hosted.contains(&n) {
                ports.push(1);
            }
            if n == 1 {
                ports.push(4);
            }
            for p in ports {
                args.extend(["-i".to_owned(), format!("{p}@s{n}-e{p}")]);
            }
            args.extend(
                ["--log-level", "warn", "--", "--grpc-server-addr", &addr].map(String::from),
            );
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            self.spawn(&bin("intpath-switch"), &args, &format!("s{n}"));
            map.push(json!({"name": format!("s{n}"), "grpc_addr": addr, "device_id": n, "cpu_port": 255}));
        }
        let map_file = self.file("switches.json");
        std::fs::write(&map_file, json!({ "switches": map }).to_string()).unwrap();
        // Deploy retries nothing: wait until every switch listens.
        let intpath = bin("intpath");
        self.wait_until("the switches' P4Runtime servers", 20, || {
            self.ns
                .cmd(&intpath)
                .args(["switches", "status", "--switches", &map_file])
                .output()
                .is_ok_and(|o| o.status.success())
        });
        (topo, map_file)
    }

    /// Plans `topo` into `plan.json`, deploys it, and starts the collector
    /// (on hc, following the plan file) and `intpath watch`. Returns the
    /// plan and database files.
    pub fn plan_deploy_collect_watch(&mut self, topo: &str, map: &str) -> (String, String) {
        let plan = self.file("plan.json");
        let db = self.file("telemetry.db");
        let intpath = bin("intpath");
        let o = self.run(&intpath, &["plan", "--topo", topo, "--format", "json"]);
        std::fs::write(&plan, &o.stdout).unwrap();
        self.run(
            &intpath,
            &["deploy", "--topo", topo, "--plan", &plan, "--switches", map],
        );
        self.spawn(
            &bin("intpath-collector"),
            &[
                "collect",
                "--iface",
                "hc-e0",
                "--db",
                &db,
                "--plan",
                &plan,
                "--topo",
                topo,
                "--follow-plan",
            ],
            "collector",
        );
        self.spawn(
            &intpath,
            &[
                "watch",
                "--topo",
                topo,
                "--switches",
                map,
                "--plan",
                &plan,
                "--db",
                &db,
                "--interval",
                "0.5",
                "--silence",
                "1.5",
            ],
            "watch",
        );
        (plan, db)
    }

    /// `probe-gen send --follow-plan` at 50 probes/s per path, with `extra`
    /// arguments saying who sends.
    pub fn send(&mut self, plan: &str, extra: &[&str], log: &str) {
        let mut args = vec![
            "send",
            "--plan",
            plan,
            "--follow-plan",
            "--collector",
            COLLECTOR_IP,
            "--rate",
            "50",
        ];
        args.extend_from_slice(extra);
        self.spawn(&bin("probe-gen"), &args, log);
    }

    /// A sender on every host hN of a ring of `switches` all hosted,
    /// generating the paths of sN.
    #[allow(dead_code)] // not every test binary including this uses it
    pub fn send_from_every_host(&mut self, plan: &str, switches: u16) {
        for n in 1..=switches {
            let (sw, iface, src) = (format!("s{n}"), format!("h{n}-e0"), format!("10.0.0.{n}"));
            self.send(
                plan,
                &["--generator", &sw, "--iface", &iface, "--src-ip", &src],
                &format!("probe-gen-{n}"),
            );
        }
    }

    /// Waits until the collector's newest run after `after` has at least
    /// 20 probes on every path; returns that run.
    pub fn wait_for_every_path(&self, db: &str, after: i64, what: &str) -> i64 {
        let mut seen = 0;
        self.wait_until(what, 30, || {
            newest_run(db).is_some_and(|(run, c)| {
                seen = run;
                run > after && !c.is_empty() && c.iter().all(|&(_, n)| n >= 20)
            })
        });
        seen
    }
}

fn ring_topology(switches: u16, hosted: &[u16]) -> Value {
    let mut hosts = Vec::new();
    let mut links = Vec::new();
    for n in 1..=switches {
        let next = n % switches + 1;
        links
            .push(json!({"a": format!("s{n}"), "a_port": 2, "b": format!("s{next}"), "b_port": 3}));
        if hosted.contains(&n) {
            hosts.push(json!({"name": format!("h{n}"), "ip": format!("10.0.0.{n}"),
                "mac": format!("00:00:0a:00:00:{n:02x}"), "switch": format!("s{n}"), "port": 1}));
            links.push(
                json!({"a": format!("h{n}"), "a_port": 0, "b": format!("s{n}"), "b_port": 1}),
            );
        }
    }
    hosts.push(json!({"name": "hc", "ip": COLLECTOR_IP,
        "mac": "00:00:0a:00:00:64", "switch": "s1", "port": 4}));
    links.push(json!({"a": "hc", "a_port": 0, "b": "s1", "b_port": 4}));
    let switches: Vec<Value> = (1..=switches)
        .map(|n| json!({"name": format!("s{n}"), "id": n}))
        .collect();
    json!({"switches": switches, "hosts": hosts, "links": links})
}

/// Per-path probe counts of the collector's newest run, with the run id.
fn newest_run(db: &str) -> Option<(i64, Vec<(u64, i64)>)> {
    let q = |what: &str| -> Option<Value> {
        let o = Command::new(env!("CARGO_BIN_EXE_intpath"))
            .args(["query", "--db", db, "--format", "json", what])
            .output()
            .ok()?;
        serde_json::from_slice(&o.stdout).ok()
    };
    let runs = q("runs")?;
    let run = runs
        .as_array()?
        .iter()
        .filter_map(|r| r["run"].as_i64())
        .max()?;
    let paths = q("paths")?;
    let counts = paths
        .as_array()?
        .iter()
        .filter_map(|p| Some((p["path"].as_u64()?, p["probes"].as_i64()?)))
        .collect();
    Some((run, counts))
}
