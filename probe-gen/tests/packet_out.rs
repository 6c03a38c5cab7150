//! Injection as P4Runtime packet-outs, over real gRPC to the shared fake
//! device, which keeps every packet-out it receives (the reference switch's
//! own behaviour on them is tested with the switch).

use intpath_core::wire::ProbeRepr;
use intpath_p4rt::bytes::decode_uint;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_test_support::fake_device::FakeDevice;
use intpath_test_support::TempDir;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};
use tokio::sync::mpsc;

const BIN: &str = env!("CARGO_BIN_EXE_probe-gen");

/// Starts a device; returns its address and the packet-outs it receives.
async fn device(min_election_id: u128) -> (String, mpsc::UnboundedReceiver<p4::PacketOut>) {
    let d = FakeDevice {
        primary_from: min_election_id,
        sr_int_loaded: true,
        ..Default::default()
    }
    .serve()
    .await;
    (d.addr, d.packet_outs)
}

/// A scratch directory with a plan (paths 3 and 4 from s1, 5 from s2) and
/// a switch map that puts s1 at `addr`.
fn scratch(addr: &str) -> TempDir {
    let tmp = intpath_test_support::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("plan.json"),
        r#"{"topology":"t","algo":"euler","paths":[
            {"id":3,"nodes":["s1","s2"],"egress_ports":[2]},
            {"id":4,"nodes":["s1","s3","s2"],"egress_ports":[3,1]},
            {"id":5,"nodes":["s2","s1"],"egress_ports":[1]}],
            "stats":{"paths":3,"lower_bound":3,"max_len":2,"mean_len":1.3,"len_variance":0.2,"plan_ms":0.1}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("switches.json"),
        format!(
            r#"{{"switches":[{{"name":"s1","grpc_addr":"{addr}","device_id":1,"cpu_port":255}}]}}"#
        ),
    )
    .unwrap();
    tmp
}

/// Runs `probe-gen send` against the scratch files off the runtime's threads.
async fn send(dir: &Path, args: &str) -> Output {
    let mut c = Command::new(BIN);
    c.args([
        "send",
        "--collector",
        "10.0.0.9",
        "--src-ip",
        "10.0.0.1",
        "--plan",
    ])
    .arg(dir.join("plan.json"))
    .arg("--switch-map")
    .arg(dir.join("switches.json"))
    .args(args.split_whitespace());
    tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_arrive_as_packet_outs_that_run_the_pipeline() {
    let (addr, mut rx) = device(1).await;
    let dir = scratch(&addr);
    let out = send(
        dir.path(),
        "--switch s1 --generator s1 --rate 400 --count 40",
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("sent 80, errors 0"), "{stderr}");

    let mut next_seq: HashMap<u16, u32> = HashMap::new();
    for _ in 0..80 {
        let p = tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv())
            .await
            .expect("a packet-out")
            .expect("device running");
        // packet_out.egress_port (id 1) = 0: run the ingress pipeline.
        let port = p
            .metadata
            .iter()
            .find(|m| m.metadata_id == 1)
            .expect("egress_port");
        assert_eq!(decode_uint(&port.value).unwrap(), 0);
        let probe = ProbeRepr::parse(&p.payload).expect("a probe");
        assert_eq!(
            probe.ip_src,
            "10.0.0.1".parse::<std::net::Ipv4Addr>().unwrap()
        );
        assert!(probe.sr.labels.is_empty() && probe.int.records.is_empty());
        let seq = next_seq.entry(probe.sr.path_id).or_default();
        assert_eq!(probe.payload.sequence, *seq);
        *seq += 1;
    }
    assert!(rx.try_recv().is_err(), "more packet-outs than probes sent");
    assert_eq!(next_seq, HashMap::from([(3, 40), (4, 40)]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switch_trouble_is_a_clear_error() {
    let (addr, _rx) = device(5).await;
    let dir = scratch(&addr);
    let check = |out: Output, want: &str| {
        let e = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{e}");
        assert!(e.contains(want), "wanted {want:?} in {e}");
    };
    // Another controller (election id 5) is primary.
    check(
        send(
            dir.path(),
            "--switch s1 --generator s1 --rate 10 --count 1 --election-id 2",
        )
        .await,
        "not primary",
    );
    check(
        send(dir.path(), "--switch s1 --all --rate 10 --count 1").await,
        "the selected paths start at 2 switches (s1, s2)",
    );
    check(
        send(dir.path(), "--switch s2 --generator s2 --rate 10 --count 1").await,
        "switch \"s2\" is not in the switch map",
    );
    check(
        send(dir.path(), "--switch s1 --path 5 --rate 10 --count 1").await,
        "the selected paths start at s2, not at --switch s1",
    );
    // Nothing listens at the address any more.
    let gone = intpath_test_support::free_addr();
    let dir2 = scratch(&gone);
    check(
        send(
            dir2.path(),
            "--switch s1 --generator s1 --rate 10 --count 1",
        )
        .await,
        &format!("switch s1 (device 1 at {gone}): cannot connect"),
    );
}

/// A triangle whose only host hangs off s2: paths 3 and 4 of the scratch
/// plan start at s1, which has none.
fn hostless_topology(dir: &Path) -> String {
    let file = dir.join("topo.json");
    std::fs::write(
        &file,
        r#"{"switches":[{"name":"s1","id":1},{"name":"s2","id":2},{"name":"s3","id":3}],
            "hosts":[{"name":"h2","ip":"10.0.0.2","mac":"00:00:0a:00:00:02","switch":"s2","port":3}],
            "links":[{"a":"s1","a_port":2,"b":"s2","b_port":1},
                     {"a":"s1","a_port":3,"b":"s3","b_port":1},
                     {"a":"s3","a_port":2,"b":"s2","b_port":2},
                     {"a":"h2","b":"s2","b_port":3}]}"#,
    )
    .unwrap();
    file.to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostless_paths_go_in_as_packet_outs_at_their_first_switch() {
    let (addr, mut rx) = device(1).await;
    let dir = scratch(&addr);
    let topo = hostless_topology(dir.path());
    let out = send(
        dir.path(),
        &format!("--hostless --topo {topo} --rate 400 --count 10"),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("sent 20, errors 0"), "{stderr}");
    let mut per_path: HashMap<u16, u32> = HashMap::new();
    for _ in 0..20 {
        let p = tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv())
            .await
            .expect("a packet-out")
            .expect("device running");
        *per_path
            .entry(ProbeRepr::parse(&p.payload).unwrap().sr.path_id)
            .or_default() += 1;
    }
    // Path 5 starts at s2, whose host sends it.
    assert_eq!(per_path, HashMap::from([(3, 10), (4, 10)]));
}

#[test]
fn hostless_paths_without_a_switch_map_are_an_error_naming_them() {
    let tmp = scratch("127.0.0.1:1");
    let dir = tmp.path();
    let topo = hostless_topology(dir);
    let out = Command::new(BIN)
        .args(["send", "--collector", "10.0.0.9", "--src-ip", "10.0.0.1"])
        .args(["--hostless", "--topo", &topo, "--rate", "10", "--plan"])
        .arg(dir.join("plan.json"))
        .args(["--follow-plan", "--duration", "0.5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("ERROR")
            && stderr.contains(
                "paths 3, 4 start at switches without a host (s1) and nobody sends on them"
            ),
        "{stderr}"
    );
}
