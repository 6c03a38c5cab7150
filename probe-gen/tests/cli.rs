//! The binary end to end: probes and background traffic sent on a real veth
//! pair, captured on its peer, and the errors a user sees.

mod common;

use common::{final_counts, run_ok, send, Capture, Veth, BIN, TX, TX_IP};
use intpath_core::wire::{
    EthernetFrame, Ipv4Packet, Ipv4Repr, MacAddr, ProbeRepr, UdpPacket, MAX_HOPS,
};
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::process::{Command, Output};
use std::time::{SystemTime, UNIX_EPOCH};

const SRC_MAC: &str = "02:00:00:00:00:01";
const DST_MAC: &str = "02:00:00:00:00:02";

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

#[test]
#[ignore = "needs root"]
fn capture_sees_exactly_the_probes_sent() {
    let v = Veth::new("probes");
    let plan = common::write_plan(&v);
    let cap = Capture::start(&v, "udp");
    let before = unix_ns();
    let stderr = run_ok(&mut send(
        &v,
        &plan,
        &format!("--generator s1 --rate 500 --count 150 --src-mac {SRC_MAC} --dst-mac {DST_MAC}"),
    ));
    let after = unix_ns();
    let frames = cap.finish();
    assert_eq!(final_counts(&stderr), (300, 0), "{stderr}");
    assert_eq!(frames.len(), 300, "captured {} frames", frames.len());

    let mut next_seq: HashMap<u16, u32> = HashMap::new();
    let mut last_ts = 0;
    for f in &frames {
        let p = ProbeRepr::parse(&f.data).expect("a well-formed probe");
        assert_eq!(p.eth.src, SRC_MAC.parse::<MacAddr>().unwrap());
        assert_eq!(p.eth.dst, DST_MAC.parse::<MacAddr>().unwrap());
        assert_eq!(
            p.ip_src,
            TX_IP.parse::<Ipv4Addr>().unwrap(),
            "source is the interface's IP"
        );
        assert_eq!(p.ip_dst, Ipv4Addr::new(10, 99, 0, 9));
        assert!(
            p.sr.labels.is_empty(),
            "the generator switch pushes the labels"
        );
        assert!(p.int.records.is_empty());
        assert_eq!(p.int.remaining_hops, MAX_HOPS as u8);
        assert_eq!(p.payload.path_id, p.sr.path_id);
        let seq = next_seq.entry(p.sr.path_id).or_default();
        assert_eq!(
            p.payload.sequence, *seq,
            "path {} out of order",
            p.sr.path_id
        );
        *seq += 1;
        assert!((before..=after).contains(&p.payload.send_ts));
        assert!(p.payload.send_ts >= last_ts, "send timestamps go backwards");
        assert!(p.payload.send_ts <= f.ts_ns, "sent after it was received");
        last_ts = p.payload.send_ts;
    }
    assert_eq!(
        next_seq,
        HashMap::from([(3, 150), (4, 150)]),
        "only s1's paths, all of them"
    );
}

#[test]
#[ignore = "needs root"]
fn traffic_goes_to_the_listed_destinations_at_the_asked_size() {
    let v = Veth::new("traffic");
    let dsts = v.dir().join("dsts.txt");
    std::fs::write(&dsts, "10.99.0.2 02:00:00:00:00:02\n# comment\n10.99.0.3\n").unwrap();
    let cap = Capture::start(&v, "udp");
    let stderr = run_ok(
        v.cmd(BIN)
            .args(["traffic", "--iface", TX, "--dst-file"])
            .arg(&dsts)
            .args([
                "--rate",
                "1000",
                "--poisson",
                "--count",
                "400",
                "--size",
                "300",
                "--dst-mac",
                "02:00:00:00:00:ff",
            ]),
    );
    let frames = cap.finish();
    assert_eq!(final_counts(&stderr), (400, 0), "{stderr}");
    assert_eq!(frames.len(), 400);
    let mut per_dst: HashMap<Ipv4Addr, usize> = HashMap::new();
    for f in &frames {
        assert_eq!(f.data.len(), 300);
        let eth = EthernetFrame::new_checked(&f.data[..]).unwrap();
        let ip = Ipv4Repr::parse(&Ipv4Packet::new_checked(eth.payload()).unwrap()).unwrap();
        let want_mac = if ip.dst == Ipv4Addr::new(10, 99, 0, 2) {
            "02:00:00:00:00:02"
        } else {
            "02:00:00:00:00:ff"
        };
        assert_eq!(
            eth.dst_addr(),
            want_mac.parse().unwrap(),
            "MAC of {}",
            ip.dst
        );
        let udp = UdpPacket::new_checked(
            Ipv4Packet::new_checked(eth.payload())
                .unwrap()
                .payload()
                .to_vec(),
        )
        .unwrap();
        assert_eq!((udp.src_port(), udp.dst_port()), (40000, 5001));
        *per_dst.entry(ip.dst).or_default() += 1;
    }
    assert_eq!(per_dst.len(), 2, "{per_dst:?}");
    assert!(
        per_dst.values().all(|&n| n > 140),
        "not uniform: {per_dst:?}"
    );
}

#[test]
#[ignore = "needs root"]
fn traffic_to_a_topology_reaches_every_other_host_with_its_mac() {
    let v = Veth::new("topo");
    let topo = intpath_core::topo::Topology::load("fattree:k=4").unwrap();
    let me = &topo.hosts()[0];
    let others: HashMap<Ipv4Addr, MacAddr> =
        topo.hosts()[1..].iter().map(|h| (h.ip, h.mac)).collect();
    let cap = Capture::start(&v, "udp");
    let stderr = run_ok(v.cmd(BIN).args([
        "traffic",
        "--iface",
        TX,
        "--topo",
        "fattree:k=4",
        "--src-ip",
        &me.ip.to_string(),
        "--rate",
        "2000",
        "--count",
        "600",
        "--size",
        "64",
    ]));
    let frames = cap.finish();
    assert_eq!(final_counts(&stderr), (600, 0), "{stderr}");
    assert_eq!(frames.len(), 600);
    let mut seen = std::collections::HashSet::new();
    for f in &frames {
        let eth = EthernetFrame::new_checked(&f.data[..]).unwrap();
        let ip = Ipv4Repr::parse(&Ipv4Packet::new_checked(eth.payload()).unwrap()).unwrap();
        assert_eq!(ip.src, me.ip);
        assert_eq!(
            Some(&eth.dst_addr()),
            others.get(&ip.dst),
            "{} is not another host",
            ip.dst
        );
        seen.insert(ip.dst);
    }
    // 600 draws among 15 hosts miss one with probability ~1e-10.
    assert_eq!(seen.len(), others.len());
}

#[test]
#[ignore = "needs root"]
fn ctrl_c_stops_with_final_counts_matching_the_capture() {
    let v = Veth::new("sigint");
    let plan = common::write_plan(&v);
    let cap = Capture::start(&v, "udp");
    // --all and --path together is a usage error, not a run.
    let out = send(&v, &plan, "--all --rate 200 --path 5")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));

    let child = send(&v, &plan, "--path 5 --rate 200")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2300));
    // SAFETY: kill(2) on our own child (ip netns exec execs probe-gen).
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("probe-gen: 1.0 s: sent "),
        "no progress line: {stderr}"
    );
    assert!(
        stderr.contains("probe-gen: 2.0 s: sent "),
        "no progress line: {stderr}"
    );
    assert!(stderr.contains("interrupted after"), "{stderr}");
    let (sent, errors) = final_counts(&stderr);
    // Progress at 2.0 s means at least ~400 deadlines passed; the process
    // lived less than the 2.3 s between spawn and signal.
    assert!(
        (390..=462).contains(&sent),
        "sent {sent} in under 2.3 s at 200 pps"
    );
    assert_eq!(cap.finish().len() as u64, sent);
    assert_eq!(errors, 0);
}

/// Runs probe-gen with `args` (split at spaces) and expects exit code 1.
fn run_err(args: &str) -> Output {
    let out = Command::new(BIN)
        .args(args.split_whitespace())
        .output()
        .expect("run probe-gen");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    out
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_bad_interface_name_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("ippg-badif-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    std::fs::write(
        &plan,
        r#"{"topology":"t","algo":"euler","paths":[{"id":3,"nodes":["s1","s2"],"egress_ports":[2]}],
            "stats":{"paths":1,"lower_bound":1,"max_len":1,"mean_len":1.0,"len_variance":0.0,"plan_ms":0.1}}"#,
    )
    .unwrap();
    let p = plan.to_str().unwrap();
    let out = run_err(&format!(
        "send --iface ippg-nope0 --plan {p} --all --rate 10 --collector 10.0.0.1"
    ));
    let e = stderr_of(&out);
    assert!(
        e.contains("probe-gen: error: no network interface named \"ippg-nope0\" (available: lo"),
        "{e}"
    );
    let out = run_err("traffic --iface ippg-nope0 --dst 10.0.0.2 --rate 10");
    assert!(stderr_of(&out).contains("no network interface named \"ippg-nope0\""));
    // A plan path that is not there is named with what the plan has.
    let out = run_err(&format!(
        "send --iface lo --plan {p} --path 9 --rate 10 --collector 10.0.0.1"
    ));
    assert!(
        stderr_of(&out).contains("path 9 is not in the plan (its paths: 3)"),
        "{}",
        stderr_of(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unreadable_plan_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("ippg-badplan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.json");
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"paths\": [").unwrap();
    for (plan, what) in [
        (&missing, "cannot read plan"),
        (&broken, "not a plan file"),
        (&dir, "cannot read plan"),
    ] {
        let out = run_err(&format!(
            "send --iface lo --plan {} --all --rate 10 --collector 10.0.0.1",
            plan.display()
        ));
        let e = stderr_of(&out);
        assert!(
            e.starts_with("probe-gen: error: ") && e.contains(what),
            "{e}"
        );
        assert!(e.contains(plan.to_str().unwrap()), "names the file: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hop_limits_are_checked_before_anything_is_sent() {
    let plan = "/nonexistent/plan.json";
    for (args, want) in [
        (
            "--max-hops 0",
            "--max-hops 0: a probe crossing one link collects 2 records",
        ),
        (
            "--max-hops 46",
            "--max-hops 46: sr_int.p4's stacks hold at most 45 records",
        ),
        (
            "--mtu 100",
            "--mtu 100: leaves no room for a probe crossing one link",
        ),
    ] {
        let out = run_err(&format!(
            "send --iface lo --plan {plan} --all --rate 10 --collector 10.0.0.1 {args}"
        ));
        let e = stderr_of(&out);
        assert!(e.contains(want) && e.lines().count() == 1, "{args}: {e}");
    }
}

#[test]
fn traffic_takes_topo_as_every_other_command_does() {
    // Both spellings get past argument parsing (exit 1 at the interface, not 2).
    for flag in ["--topo", "--topology"] {
        let out = run_err(&format!(
            "traffic --iface ippg-nope0 {flag} fattree:k=4 --rate 10"
        ));
        assert!(
            stderr_of(&out).contains("no network interface named"),
            "{flag}: {}",
            stderr_of(&out)
        );
    }
}
