//! `intpath deploy`, `intpath switches status` and `intpath watch` as a user
//! runs them, against reference switches (`intpath-switch`, started by
//! test-support) over real gRPC, on the paper's Fig. 4 topology.

use intpath_test_support::switch::Fleet;
use std::path::Path;
use std::process::{Command, Output};

const TOPO: &str = "paper-fig4";

fn intpath(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .env("RUST_LOG", "info")
        .output()
        .expect("run intpath")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Seven reference switches (s1..s7, device ids 1..7), their switch map
/// written to `dir`.
fn start(dir: &Path) -> Fleet {
    let fleet = Fleet::start((1..=7).map(|id| (format!("s{id}"), id)));
    std::fs::write(dir.join("switches.json"), fleet.map_json()).unwrap();
    fleet
}

#[test]
fn deploy_dry_run_rerun_status_and_watch() {
    let tmp = intpath_test_support::tempdir().unwrap();
    let dir = tmp.path();
    let mut fleet = start(dir);
    let s = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let (plan, map) = (s("plan.json"), s("switches.json"));
    let o = intpath(&["plan", "--topo", TOPO, "--format", "json", "-o", &plan]);
    assert!(o.status.success(), "{:?}", text(&o));
    let deploy = |extra: &[&str]| {
        let mut args = vec![
            "deploy",
            "--topo",
            TOPO,
            "--plan",
            &plan,
            "--switches",
            &map,
        ];
        args.extend_from_slice(extra);
        intpath(&args)
    };
    // Quick to give up on a killed switch.
    let status = || {
        intpath(&[
            "switches",
            "status",
            "--switches",
            &map,
            "--connect-timeout",
            "0.5",
        ])
    };

    let o = deploy(&["--dry-run"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("would change: "), "{out}");
    assert!(
        out.contains("    INSERT SrIntIngress.generator hdr.sr.path_id="),
        "{out}"
    );
    assert!(
        out.contains("    MODIFY SrIntIngress.switch_config default"),
        "{out}"
    );

    let o = intpath(&["switches", "status", "--switches", &map]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        out.matches("entries switch_config=0 ipv4_lpm=0 generator=0 sink=0")
            .count(),
        7,
        "the dry run wrote nothing:\n{out}"
    );

    let o = deploy(&[]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // 7 switches x 7 hosts of routes at least.
    let inserts: usize = out
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("changed: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary in {out}"));
    assert!(inserts >= 49, "{out}");

    let o = deploy(&[]);
    assert_eq!(
        text(&o).0.lines().last(),
        Some("7 switches already up to date")
    );

    let o = intpath(&["switches", "status", "--switches", &map]);
    let (out, _) = text(&o);
    assert_eq!(out.matches(" up, ").count(), 7, "{out}");
    assert_eq!(out.matches("ipv4_lpm=7 ").count(), 7, "{out}");

    // A failed switch: deploy names it; watch replans without it.
    fleet.kill("s4");
    let o = deploy(&["--connect-timeout", "0.5"]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("1 of 7 switches failed") && err.contains("switch s4 (device 4 at 127.0.0.1:"),
        "{err}"
    );

    let o = status();
    let (out, err) = text(&o);
    assert!(!o.status.success());
    assert!(out.contains("s4") && out.contains("DOWN:"), "{out}");
    assert!(err.contains("1 of 7 switches unreachable"), "{err}");

    let replanned = s("replanned.json");
    let o = intpath(&[
        "watch",
        "--topo",
        TOPO,
        "--switches",
        &map,
        "--rounds",
        "1",
        "--connect-timeout",
        "0.5",
        "--plan",
        &replanned,
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("switch unreachable") && err.contains("s4:"),
        "{err}"
    );
    assert!(err.contains("replanned on the surviving topology"), "{err}");
    let p = std::fs::read_to_string(&replanned).unwrap();
    assert!(!p.contains("\"s4\""), "{p}");
    let paths = p.matches("\"egress_ports\"").count();
    // The survivors now carry exactly the new plan's generators.
    let o = status();
    let (out, _) = text(&o);
    let generators: usize = out
        .split("generator=")
        .skip(1)
        .filter_map(|r| r.split(' ').next()?.parse::<usize>().ok())
        .sum();
    assert_eq!(generators, paths, "{out}\n{p}");
}

/// `intpath`'s one-line error names each cause once: a bad plan file (our
/// error over serde's) and an unreachable switch (ours over tonic's over
/// hyper's, which repeats itself).
#[test]
fn errors_name_each_cause_once() {
    let dir = intpath_test_support::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    std::fs::write(file("plan.json"), "{ not json").unwrap();
    let dead = intpath_test_support::free_addr();
    std::fs::write(
        file("map.json"),
        format!(
            r#"{{"switches":[{{"name":"s1","grpc_addr":"{dead}","device_id":1,"cpu_port":255}},{{"name":"s2","grpc_addr":"{dead}","device_id":2,"cpu_port":255}}]}}"#
        ),
    )
    .unwrap();
    let intpath = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_intpath"))
            .args(args)
            .args(["--switches", &file("map.json"), "--connect-timeout", "0.5"])
            .output()
            .unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
    };
    let plan = file("plan.json");
    let err = intpath(&["deploy", "--topo", "paper-fig4", "--plan", &plan]);
    assert!(
        err.contains("not a plan file: key must be a string"),
        "{err}"
    );
    assert_eq!(err.matches("key must be a string").count(), 1, "{err}");

    let out = intpath(&["switches", "status"]);
    let down: Vec<&str> = out.lines().filter(|l| l.contains("DOWN:")).collect();
    assert_eq!(down.len(), 2, "{out}");
    for line in down {
        assert!(line.contains("cannot connect"), "{line}");
        assert_eq!(line.matches("tcp connect error").count(), 1, "{line}");
        assert_eq!(line.matches("Connection refused").count(), 1, "{line}");
    }
}
