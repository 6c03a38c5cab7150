//! Deploying plans onto running reference switches over real gRPC: every
//! entry read back as the plan implies, reruns change nothing, a changed
//! plan changes only the difference, a dry run writes nothing, and
//! failures name the switch.

use intpath_controller::deploy::{self, DeployOptions, Route, SinkMode, StatusQuery};
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_core::switch_map::{SwitchEntry, SwitchMap};
use intpath_p4rt::client::Arbitration;
use intpath_p4rt::p4info::P4InfoIndex;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::{implied as expected, read_back, sr_int as index};
use intpath_test_support::{free_addr, switch::Fleet};

fn start(names: &[&str]) -> (Fleet, SwitchMap) {
    let fleet = Fleet::start(
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), i as u64 + 1)),
    );
    let map = fleet.map.clone();
    (fleet, map)
}

fn path(id: u16, nodes: &[&str], ports: &[u16]) -> ProbePath {
    ProbePath {
        id,
        nodes: nodes.iter().map(|&n| n.into()).collect(),
        egress_ports: ports.to_vec(),
    }
}

fn plan(paths: Vec<ProbePath>) -> Plan {
    Plan {
        topology: "line3".into(),
        algo: "test".into(),
        paths,
        stats: PlanStats::default(),
    }
}

/// A line s1 - s2 - s3 (port 2 right, port 1 left), host h_i on port 3 of
/// s_i with 10.0.0.i: routes to every host.
fn routes() -> BTreeMap<String, Vec<Route>> {
    let mut r = BTreeMap::new();
    for s in 1..=3u8 {
        let v = (1..=3u8)
            .map(|h| Route {
                prefix: Ipv4Addr::new(10, 0, 0, h),
                prefix_len: 32,
                port: match h.cmp(&s) {
                    std::cmp::Ordering::Equal => 3,
                    std::cmp::Ordering::Greater => 2,
                    std::cmp::Ordering::Less => 1,
                },
                dst_mac: [0, 0, 10, 0, 0, h],
            })
            .collect();
        r.insert(format!("s{s}"), v);
    }
    r
}

fn counts(r: &[deploy::SwitchReport]) -> Vec<(usize, usize, usize)> {
    r.iter()
        .map(|r| (r.inserts, r.modifies, r.deletes))
        .collect()
}

#[tokio::test]
async fn deploy_rerun_change_and_dry_run() {
    let (_switches, map) = start(&["s1", "s2", "s3"]);
    let ix = index();
    let opts = DeployOptions::default();
    let p1 = plan(vec![
        path(0, &["s1", "s2", "s3"], &[2, 2]),
        path(1, &["s3", "s2"], &[1]),
    ]);
    let i1 = deploy::intents(&p1, &map, routes(), SinkMode::Collector).unwrap();
    let r = deploy::deploy(ix.clone(), &map, &i1, &opts).await.unwrap();
    // switch id (default: modify) + 3 routes + generators + sinks.
    assert_eq!(counts(&r), vec![(4, 1, 0), (4, 1, 0), (5, 1, 0)]);
    let got = read_back(&map, &ix).await;
    assert_eq!(got, expected(&ix, &i1));
    // The label stack in its canonical form: 89 significant bytes.
    let generator = format!(
        "SrIntIngress.generator hdr.sr.path_id=0x00 -> \
         SrIntIngress.push_route(num_labels=0x02, labels=0x020002{})",
        "0".repeat(172)
    );
    assert!(got["s1"].contains(&generator), "{:?}", got["s1"]);

    // Rerun: nothing to do.
    let r = deploy::deploy(ix.clone(), &map, &i1, &opts).await.unwrap();
    assert_eq!(counts(&r), vec![(0, 0, 0); 3]);
    assert!(r.iter().all(|r| r.changes.is_empty() && r.unchanged > 0));

    // Changed plan, dry: reported, not written.
    let p2 = plan(vec![
        path(0, &["s1", "s2"], &[2]),
        path(2, &["s2", "s3"], &[2]),
    ]);
    let i2 = deploy::intents(&p2, &map, routes(), SinkMode::Cpu).unwrap();
    let dry = DeployOptions {
        dry_run: true,
        ..opts.clone()
    };
    let r = deploy::deploy(ix.clone(), &map, &i2, &dry).await.unwrap();
    // s1: path 0 shortened (modify). s2: path 0 sink new, path 1 sink gone,
    // path 2 generator new. s3: path 0 sink gone, path 1 generator gone,
    // path 2 sink new.
    assert_eq!(counts(&r), vec![(0, 1, 0), (2, 0, 1), (1, 0, 2)]);
    assert!(
        r[2].changes
            .iter()
            .any(|c| c.starts_with("DELETE SrIntIngress.generator")),
        "{:?}",
        r[2].changes
    );
    assert_eq!(read_back(&map, &ix).await, expected(&ix, &i1));

    // Changed plan, for real: exactly the dry run's difference.
    let real = deploy::deploy(ix.clone(), &map, &i2, &opts).await.unwrap();
    assert_eq!(counts(&real), counts(&r));
    assert_eq!(read_back(&map, &ix).await, expected(&ix, &i2));

    let st = deploy::status(ix.clone(), &map, &opts, &StatusQuery::default()).await;
    let entries: Vec<_> = st
        .iter()
        .map(|s| s.entries.iter().map(|(_, n)| *n).collect::<Vec<_>>())
        .collect();
    // switch_config (default only), routes, generators, sinks.
    assert_eq!(
        entries,
        vec![vec![0, 3, 1, 0], vec![0, 3, 1, 1], vec![0, 3, 0, 1]]
    );
}

#[tokio::test]
async fn unreachable_switch_is_named_and_others_still_deploy() {
    let (_switches, mut map) = start(&["s1"]);
    let dead = free_addr();
    map.switches.push(SwitchEntry {
        name: "s2".into(),
        grpc_addr: dead.clone(),
        device_id: 2,
        cpu_port: 255,
        admin_addr: None,
        thrift_port: None,
    });
    let ix = index();
    let intents =
        deploy::intents(&plan(vec![]), &map, BTreeMap::new(), SinkMode::Collector).unwrap();
    let opts = DeployOptions {
        connect_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let e = deploy::deploy(ix.clone(), &map, &intents, &opts)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("1 of 2 switches failed"), "{e}");
    assert!(
        e.contains("switch s2 (device 2 at ") && e.contains(&dead),
        "{e}"
    );
    // s1 got its switch id regardless.
    let got = read_back(
        &SwitchMap {
            switches: vec![map.switches[0].clone()],
        },
        &ix,
    )
    .await;
    assert!(
        got["s1"]
            .iter()
            .any(|e| e.contains("set_switch_id(switch_id=0x01)")),
        "{got:?}"
    );

    // Status: s1 answers (as an observer), s2 is reported unreachable.
    let query = StatusQuery {
        arbitrate_as: Some(1),
        intents: None,
    };
    let st = deploy::status(ix.clone(), &map, &opts, &query).await;
    assert_eq!(st[0].error, None);
    assert!(matches!(
        st[0].arbitration,
        Some(Ok(Arbitration::Primary | Arbitration::Backup { .. }))
    ));
    assert_eq!(st[0].entries.iter().map(|(_, n)| n).sum::<usize>(), 0);
    assert!(
        st[1].error.as_deref().unwrap_or("").contains(&dead),
        "{:?}",
        st[1]
    );
}

#[tokio::test]
async fn p4info_mismatch_names_the_object() {
    let (_switches, map) = start(&["s1"]);
    let mut info = index().p4info().clone();
    let counter = info
        .counters
        .iter_mut()
        .find(|c| c.preamble.as_ref().unwrap().name == "SrIntIngress.drop_counter")
        .unwrap();
    counter.preamble.as_mut().unwrap().id += 1;
    let ix = Arc::new(P4InfoIndex::new(info).unwrap());
    let intents =
        deploy::intents(&plan(vec![]), &map, BTreeMap::new(), SinkMode::Collector).unwrap();
    let e = deploy::deploy(ix, &map, &intents, &DeployOptions::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("P4Info mismatch: counter SrIntIngress.drop_counter has id"),
        "{e}"
    );
}

#[tokio::test]
async fn deploys_over_tls_with_a_client_certificate_and_not_without() {
    let dir = intpath_test_support::tempdir().unwrap();
    let certs = intpath_test_support::tls::make(dir.path());
    let addr = free_addr();
    let _switch = intpath_test_support::switch::SwitchProc::start_tls(1, addr.clone(), &certs);
    let map = SwitchMap {
        switches: vec![SwitchEntry {
            name: "s1".into(),
            grpc_addr: addr,
            device_id: 1,
            cpu_port: 255,
            admin_addr: None,
            thrift_port: None,
        }],
    };
    let ix = index();
    let intents =
        deploy::intents(&plan(vec![]), &map, BTreeMap::new(), SinkMode::Collector).unwrap();
    let tls = |identity: bool| deploy::ClientTls {
        ca_pem: std::fs::read(&certs.ca).unwrap(),
        identity: identity.then(|| {
            (
                std::fs::read(&certs.client_cert).unwrap(),
                std::fs::read(&certs.client_key).unwrap(),
            )
        }),
        domain: None,
    };
    let opts = |tls| DeployOptions {
        connect_timeout: Duration::from_millis(1000),
        tls,
        ..Default::default()
    };
    for (who, o) in [
        ("plain text", opts(None)),
        ("no client certificate", opts(Some(tls(false)))),
    ] {
        let e = deploy::deploy(ix.clone(), &map, &intents, &o).await;
        assert!(e.is_err(), "{who}: deployed");
    }
    let reports = deploy::deploy(ix.clone(), &map, &intents, &opts(Some(tls(true))))
        .await
        .unwrap();
    assert_eq!(reports.len(), 1);
    let got = deploy::status(ix, &map, &opts(Some(tls(true))), &StatusQuery::default()).await;
    assert!(got[0].error.is_none(), "{:?}", got[0].error);
}
