//! The whole injection path on real components: probe-gen sends packet-outs
//! to the reference switch (`intpath-switch`) over gRPC, the switch runs its
//! pipeline on them (generator pushes the route, egress pushes a record) and
//! sends them out a veth port, where a capture reads them back.

mod common;

use common::{Capture, Veth, TX};
use intpath_core::wire::{ProbeRepr, MAX_HOPS};
use intpath_p4rt::client::{Client, ClientConfig, Target};
use intpath_p4rt::p4info::Match;
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_probe-gen");
/// Inside the test's own namespace, so no other test can hold it.
const GRPC: &str = "127.0.0.1:9559";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Switch 1 sends path 3 out of port 1 (the veth's sending end).
fn program(v: &Veth) {
    std::thread::scope(|s| {
        s.spawn(|| {
            v.enter();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let mut config = ClientConfig::new(Target {
                    name: "s1".into(),
                    addr: GRPC.into(),
                    device_id: 1,
                });
                config.election_id = 10;
                let deadline = Instant::now() + Duration::from_secs(10);
                let mut client = loop {
                    match Client::connect(config.clone()).await {
                        Ok(c) => break c,
                        Err(e) if Instant::now() > deadline => panic!("switch never answered: {e}"),
                        Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                    }
                };
                let ix = Arc::new(intpath_sr_int::p4info().unwrap());
                client
                    .ensure_pipeline(ix.clone(), b"{}", 1, false)
                    .await
                    .unwrap();
                let mut labels = [0u8; 90];
                labels[1] = 1;
                let entries = [
                    ix.default_entry(
                        "SrIntIngress.switch_config",
                        "SrIntIngress.set_switch_id",
                        &[("switch_id", &[1][..])],
                    )
                    .unwrap(),
                    ix.table_entry(
                        "SrIntIngress.generator",
                        &[("hdr.sr.path_id", Match::Exact(vec![0, 3]))],
                        "SrIntIngress.push_route",
                        &[("num_labels", &[1][..]), ("labels", &labels[..])],
                    )
                    .unwrap(),
                ];
                client.sync(&entries, &[]).await.unwrap();
            });
        });
    });
}

#[test]
#[ignore = "needs root"]
fn packet_out_probes_leave_the_switch_with_its_record() {
    let v = Veth::new("e2e");
    let _switch = Killed(
        v.cmd(
            intpath_test_support::switch::switch_binary()
                .to_str()
                .unwrap(),
        )
        .args([
            "--device-id",
            "1",
            "--cpu-port",
            "255",
            "-i",
            &format!("1@{TX}"),
        ])
        .args(["--log-level", "warn", "--", "--grpc-server-addr", GRPC])
        .spawn()
        .expect("start intpath-switch"),
    );
    program(&v);
    let plan = common::write_plan(&v);
    let map = v.dir().join("switches.json");
    std::fs::write(
        &map,
        format!(
            r#"{{"switches":[{{"name":"s1","grpc_addr":"{GRPC}","device_id":1,"cpu_port":255}}]}}"#
        ),
    )
    .unwrap();

    let cap = Capture::start(&v, "udp");
    let out = v
        .cmd(BIN)
        .args(["send", "--switch", "s1", "--switch-map"])
        .arg(&map)
        .arg("--plan")
        .arg(&plan)
        .args([
            "--path",
            "3",
            "--rate",
            "200",
            "--count",
            "20",
            "--collector",
            "10.99.0.9",
        ])
        .args(["--src-ip", "10.99.0.1", "--election-id", "11"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("sent 20, errors 0"), "{stderr}");
    let frames = cap.finish();
    assert_eq!(frames.len(), 20, "{stderr}");
    for (seq, f) in frames.iter().enumerate() {
        let p = ProbeRepr::parse(&f.data).expect("a probe");
        assert_eq!((p.sr.path_id, p.payload.sequence), (3, seq as u32));
        assert!(p.sr.labels.is_empty(), "the one label was popped");
        assert_eq!(p.int.records.len(), 1);
        assert_eq!(p.int.remaining_hops, MAX_HOPS as u8 - 1);
        let r = &p.int.records[0];
        assert_eq!((r.switch_id, r.egress_port), (1, 1));
    }
}
