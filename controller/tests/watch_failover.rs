//! `intpath watch` keeping coverage when a link dies, with every part real:
//! four reference switches in a ring inside a network namespace, joined by
//! veth pairs; probe-gen on every host following the plan file; the
//! collector capturing into SQLite and following the plan file too. One
//! link of the probe path is cut; watch must notice that the path went
//! silent, blame that link from the port counters, replan around it,
//! redeploy, and probes must then arrive on every new path.
//!
//! Needs root (network namespaces): ignored unless run with
//! `--include-ignored`.

use intpath_test_support::netns::Netns;
use intpath_test_support::{tempdir, TempDir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Switches s1..s4 in a ring (port 2 clockwise, port 3 anticlockwise),
/// host hN on port 1 of sN, the collector's host hc on port 4 of s1.
const SWITCHES: u16 = 4;
const COLLECTOR_IP: &str = "10.0.0.100";

/// The namespace and scratch directory go when the lab is dropped, after
/// its processes.
struct Lab {
    ns: Netns,
    dir: TempDir,
    children: Vec<Child>,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for c in &mut self.children {
            // SIGTERM first, so the collector flushes (its output helps a
            // failing test); SIGKILL whatever is left.
            let _ = Command::new("kill").arg(c.id().to_string()).status();
        }
        std::thread::sleep(Duration::from_millis(300));
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn bin(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_BIN_EXE_intpath")).with_file_name(name);
    assert!(
        p.exists(),
        "{} missing: cargo build --workspace",
        p.display()
    );
    p
}

impl Lab {
    fn new() -> Self {
        Lab {
            ns: Netns::new("ipw"),
            dir: tempdir().unwrap(),
            children: Vec::new(),
        }
    }

    fn file(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    /// `program args…` inside the namespace, output to `<log>.out/.err`.
    fn spawn(&mut self, program: &Path, args: &[&str], log: &str) {
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
        self.children.push(child);
    }

    fn run(&self, program: &Path, args: &[&str]) -> Output {
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

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap_or_default()
    }
}

fn ring_topology() -> Value {
    let mut hosts = Vec::new();
    let mut links = Vec::new();
    for n in 1..=SWITCHES {
        let next = n % SWITCHES + 1;
        links.push(serde_json::json!({"a": format!("s{n}"), "a_port": 2, "b": format!("s{next}"), "b_port": 3}));
        hosts.push(
            serde_json::json!({"name": format!("h{n}"), "ip": format!("10.0.0.{n}"),
            "mac": format!("00:00:0a:00:00:{n:02x}"), "switch": format!("s{n}"), "port": 1}),
        );
        links.push(serde_json::json!({"a": format!("h{n}"), "a_port": 0, "b": format!("s{n}"), "b_port": 1}));
    }
    hosts.push(serde_json::json!({"name": "hc", "ip": COLLECTOR_IP,
        "mac": "00:00:0a:00:00:64", "switch": "s1", "port": 4}));
    links.push(serde_json::json!({"a": "hc", "a_port": 0, "b": "s1", "b_port": 4}));
    let switches: Vec<Value> = (1..=SWITCHES)
        .map(|n| serde_json::json!({"name": format!("s{n}"), "id": n}))
        .collect();
    serde_json::json!({"switches": switches, "hosts": hosts, "links": links})
}

/// `(switch, egress port)` of every hop of every path of a plan file.
fn hops(plan: &str) -> Vec<(String, u64)> {
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(plan).unwrap()).unwrap();
    let mut hops = Vec::new();
    for p in plan["paths"].as_array().unwrap() {
        let nodes = p["nodes"].as_array().unwrap();
        for (n, port) in nodes.iter().zip(p["egress_ports"].as_array().unwrap()) {
            hops.push((n.as_str().unwrap().to_owned(), port.as_u64().unwrap()));
        }
    }
    hops
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

fn wait_until(what: &str, secs: u64, lab: &Lab, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\nwatch:\n{}\ncollector:\n{}",
            lab.log("watch.err"),
            lab.log("collector.err")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
#[ignore = "needs root"]
fn watch_replans_around_a_cut_link_and_probes_flow_again() {
    let mut lab = Lab::new();
    let topo = lab.file("ring.json");
    std::fs::write(&topo, ring_topology().to_string()).unwrap();
    for n in 1..=SWITCHES {
        let next = n % SWITCHES + 1;
        lab.ns.veth(&format!("s{n}-e2"), &format!("s{next}-e3"));
        lab.ns.veth(&format!("h{n}-e0"), &format!("s{n}-e1"));
    }
    lab.ns.veth("hc-e0", "s1-e4");

    let mut map = Vec::new();
    for n in 1..=SWITCHES {
        let addr = format!("127.0.0.1:{}", 50100 + n);
        let mut args = vec!["--device-id".to_owned(), n.to_string()];
        let ports = if n == 1 { 4 } else { 3 };
        for p in 1..=ports {
            args.extend(["-i".to_owned(), format!("{p}@s{n}-e{p}")]);
        }
        args.extend(["--log-level", "warn", "--", "--grpc-server-addr", &addr].map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        lab.spawn(&bin("intpath-switch"), &args, &format!("s{n}"));
        map.push(serde_json::json!({"name": format!("s{n}"), "grpc_addr": addr, "device_id": n, "cpu_port": 255}));
    }
    let map_file = lab.file("switches.json");
    std::fs::write(
        &map_file,
        serde_json::json!({ "switches": map }).to_string(),
    )
    .unwrap();

    let plan = lab.file("plan.json");
    let intpath = bin("intpath");
    let o = lab.run(&intpath, &["plan", "--topo", &topo, "--format", "json"]);
    std::fs::write(&plan, &o.stdout).unwrap();
    // Deploy retries nothing: wait until every switch listens.
    wait_until("the switches' P4Runtime servers", 20, &lab, || {
        lab.ns
            .cmd(&intpath)
            .args(["switches", "status", "--switches", &map_file])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    lab.run(
        &intpath,
        &[
            "deploy",
            "--topo",
            &topo,
            "--plan",
            &plan,
            "--switches",
            &map_file,
        ],
    );

    let db = lab.file("telemetry.db");
    lab.spawn(
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
            &topo,
            "--follow-plan",
        ],
        "collector",
    );
    for n in 1..=SWITCHES {
        let (iface, src, sw) = (format!("h{n}-e0"), format!("10.0.0.{n}"), format!("s{n}"));
        lab.spawn(
            &bin("probe-gen"),
            &[
                "send",
                "--plan",
                &plan,
                "--generator",
                &sw,
                "--follow-plan",
                "--collector",
                COLLECTOR_IP,
                "--iface",
                &iface,
                "--src-ip",
                &src,
                "--rate",
                "50",
            ],
            &format!("probe-gen-{n}"),
        );
    }
    lab.spawn(
        &intpath,
        &[
            "watch",
            "--topo",
            &topo,
            "--switches",
            &map_file,
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

    // Before the cut: the one planned path delivers.
    let before = hops(&plan);
    wait_until("probes of the first plan", 20, &lab, || {
        newest_run(&db).is_some_and(|(_, c)| !c.is_empty() && c.iter().all(|&(_, n)| n >= 20))
    });
    let (first_run, _) = newest_run(&db).unwrap();

    // Cut the link the path crosses second.
    let (from, port) = before[1].clone();
    let cut = format!("{from}-e{port}");
    lab.ns.ip(&["link", "set", &cut, "down"]);
    let (peer, peer_port) = if port == 2 {
        let n: u16 = from[1..].parse().unwrap();
        (format!("s{}", n % SWITCHES + 1), 3u64)
    } else {
        let n: u16 = from[1..].parse().unwrap();
        (format!("s{}", (n + SWITCHES - 2) % SWITCHES + 1), 2)
    };

    wait_until("watch to replan", 30, &lab, || {
        lab.log("watch.err")
            .contains("replanned on the surviving topology")
    });
    let log = lab.log("watch.err");
    let blamed_one_way = format!("{from}:{port}->{peer}:{peer_port}");
    let blamed_other_way = format!("{peer}:{peer_port}->{from}:{port}");
    assert!(
        log.contains("port counters blame")
            && (log.contains(&blamed_one_way) || log.contains(&blamed_other_way)),
        "watch did not blame {blamed_one_way}:\n{log}"
    );
    let after = hops(&plan);
    assert!(
        !after.contains(&(from.clone(), port)) && !after.contains(&(peer.clone(), peer_port)),
        "the new plan still crosses the cut link: {after:?}"
    );
    // The three links left form a line: still one path, over all of them.
    assert_eq!(after.len(), before.len() - 1, "{after:?}");

    // After the replan: a new collector run on the new plan, and every one
    // of its paths delivers.
    wait_until("probes on every path of the new plan", 30, &lab, || {
        newest_run(&db).is_some_and(|(run, c)| {
            run > first_run && !c.is_empty() && c.iter().all(|&(_, n)| n >= 20)
        })
    });
    // For `--nocapture`: what watch told the operator.
    eprintln!("{}", lab.log("watch.err"));
}
