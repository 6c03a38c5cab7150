//! The client against a P4Runtime server on gRPC C-core: the official
//! `p4runtime` package's servicer on `grpcio` (tests/ccore/p4runtime_server.py,
//! installed by scripts/install-deps.sh). Like PI in simple_switch_grpc it is
//! silent until arbitration and keeps C-core's keepalive policy, so this is
//! where a client that waits for the server to speak first, or pings too
//! often, fails: arbitration, pipeline push with a bmv2 JSON, a deploy and
//! its re-sync, packet-out and packet-in, and an idle stretch.

mod common;

use common::{held, sample_entries, ROUTES, SMAC};
use intpath_p4rt::client::{Client, ClientConfig, Target};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_test_support::entries::described;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const DEVICE_ID: u64 = 4;

struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ccore/p4runtime_server.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(DEVICE_ID.to_string())
        // Outside the repository: its p4/ directory would shadow the bindings.
        .current_dir(std::env::temp_dir())
        // The p4runtime package's generated code predates protobuf 4's C++
        // descriptors; the pure-Python protobuf reads it (gRPC stays C-core).
        .env("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{python} {}: {e}", script.display()));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().strip_prefix("listening ").unwrap_or_else(|| {
        panic!(
            "the C-core P4Runtime server did not start (got {line:?}); \
             scripts/install-deps.sh installs grpcio and p4runtime"
        )
    });
    Server {
        addr: format!("127.0.0.1:{port}"),
        child,
    }
}

fn config(addr: &str, election_id: u128) -> ClientConfig {
    let mut c = ClientConfig::new(Target {
        name: "bmv2-like".into(),
        addr: addr.into(),
        device_id: DEVICE_ID,
    });
    c.election_id = election_id;
    c.connect_timeout = Duration::from_secs(5);
    c.rpc_timeout = Duration::from_secs(5);
    c
}

fn managed(ix: &P4InfoIndex) -> Vec<u32> {
    [ROUTES, SMAC]
        .iter()
        .map(|t| ix.table(t).unwrap().id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_drives_a_grpc_c_core_p4runtime_server() {
    let server = start_server();
    let ix = common::index();

    // Arbitration: the server says nothing before ours arrives.
    let mut c = Client::connect(config(&server.addr, 10))
        .await
        .expect("arbitration with a server that waits for the client");
    assert!(c.is_primary());

    // Pipeline push with a bmv2 JSON blob; a second ensure adopts it.
    let bmv2_json = br#"{"__meta__": {"version": [2, 23]}, "pipelines": []}"#;
    assert!(c
        .ensure_pipeline(ix.clone(), bmv2_json, 1, false)
        .await
        .unwrap());
    assert!(!c
        .ensure_pipeline(ix.clone(), bmv2_json, 1, false)
        .await
        .unwrap());

    // Deploy: everything written and read back; the rerun changes nothing.
    let want = sample_entries(&ix, 3, 1);
    let plan = c.sync(&want, &managed(&ix)).await.unwrap();
    assert_eq!((plan.inserts, plan.modifies, plan.deletes), (4, 1, 0));
    assert_eq!(held(&c, &ix).await, described(&ix, &want));
    assert!(c.sync(&want, &managed(&ix)).await.unwrap().is_noop());

    // Re-sync to a changed intent: the difference only.
    let want = sample_entries(&ix, 2, 9);
    let plan = c.sync(&want, &managed(&ix)).await.unwrap();
    assert_eq!(
        (plan.inserts, plan.modifies, plan.deletes, plan.unchanged),
        (0, 1, 1, 3)
    );
    assert_eq!(held(&c, &ix).await, described(&ix, &want));

    // Packet-out, echoed by the server as a packet-in.
    c.packet_out(b"probe".to_vec(), &[("egress_port", 3)])
        .await
        .unwrap();
    let p = c
        .next_packet_in(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("the echoed packet-in");
    assert_eq!(p.payload, b"probe");
    assert_eq!(p.field("ingress_port"), Some(3));

    // Idle longer than C-core lets a client ping without data thrice
    // (a ping every few seconds ends in GOAWAY too_many_pings by now).
    tokio::time::sleep(Duration::from_secs(21)).await;
    assert_eq!(held(&c, &ix).await, described(&ix, &want));
    c.packet_out(b"again".to_vec(), &[("egress_port", 1)])
        .await
        .unwrap();
    let p = c.next_packet_in(Duration::from_secs(5)).await.unwrap();
    assert_eq!(p.map(|p| p.payload), Some(b"again".to_vec()));
}
