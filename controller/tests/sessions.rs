//! Controller sessions that cannot disturb each other, against real
//! reference switches over real gRPC: a refused arbitration is named as
//! what it is, looking at switches never arbitrates (so no client holding
//! any election id makes a switch look down), and a switch restarted since
//! its deploy shows that it lost its switch id and entries.

use intpath_controller::deploy::{self, DeployOptions, Pipeline, SinkMode, StatusQuery};
use intpath_core::plan::{Plan, PlanStats, ProbePath};
use intpath_core::sessions;
use intpath_p4rt::client::{Arbitration, Client, ClientError};
use intpath_test_support::switch::Fleet;
use std::collections::BTreeMap;
use std::time::Duration;

mod common;
use common::sr_int;

fn fleet(n: u64) -> Fleet {
    Fleet::start((1..=n).map(|i| (format!("s{i}"), i)))
}

fn opts() -> DeployOptions {
    DeployOptions {
        connect_timeout: Duration::from_millis(500),
        rpc_timeout: Duration::from_secs(3),
        ..DeployOptions::default()
    }
}

#[tokio::test]
async fn a_stream_refused_for_a_duplicate_election_id_says_so() {
    let fleet = fleet(1);
    let holder = Client::connect(fleet.procs["s1"].config("s1", 7))
        .await
        .unwrap();
    assert!(holder.is_primary());
    for observer in [false, true] {
        let config = fleet.procs["s1"].config("s1", 7);
        let e = if observer {
            Client::connect_observer(config).await
        } else {
            Client::connect(config).await
        }
        .err()
        .expect("a second stream with id 7 is refused");
        let text = e.to_string();
        assert!(matches!(e, ClientError::ElectionIdInUse { .. }), "{text}");
        assert!(
            text.starts_with("another client holds election id 7 on switch s1 (device 1 at "),
            "{text}"
        );
        assert!(!text.contains("restarted or unreachable"), "{text}");
    }
}

#[tokio::test]
async fn status_never_collides_with_whoever_holds_an_election_id() {
    let fleet = fleet(2);
    let ix = sr_int();
    // Clients holding the observer's, the old shared (0) and the deploy's
    // ids on both switches.
    let mut held = Vec::new();
    for name in ["s1", "s2"] {
        for id in [0, u128::from(sessions::OBSERVER), 5] {
            let c = Client::connect_observer(fleet.procs[name].config(name, id))
                .await
                .unwrap();
            held.push(c);
        }
    }
    // What watch asks every round: reads only.
    for _ in 0..10 {
        let st = deploy::status(ix.clone(), &fleet.map, &opts(), &StatusQuery::default()).await;
        for s in &st {
            assert_eq!(s.error, None, "{s:?}");
            assert_eq!(s.arbitration, None);
        }
    }
    // `switches status` also tries to learn the primary; a refused
    // arbitration is shown as such and the switch is still up.
    let query = StatusQuery {
        arbitrate_as: Some(u128::from(sessions::OBSERVER)),
        intents: None,
    };
    let st = deploy::status(ix.clone(), &fleet.map, &opts(), &query).await;
    for s in &st {
        assert_eq!(s.error, None, "{s:?}");
        match &s.arbitration {
            Some(Err(e)) => assert!(e.contains("another client holds election id 1"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
    drop(held);
    // With nobody else on it the observer learns who is primary.
    let _deploy = Client::connect(fleet.procs["s1"].config("s1", 20))
        .await
        .unwrap();
    let st = deploy::status(ix, &fleet.map, &opts(), &query).await;
    assert_eq!(
        st[0].arbitration,
        Some(Ok(Arbitration::Backup { primary: 20 }))
    );
}

#[tokio::test]
async fn status_shows_a_restarted_switch_lost_its_switch_id_and_entries() {
    let mut fleet = fleet(2);
    let ix = sr_int();
    let plan = Plan {
        topology: "line2".into(),
        algo: "test".into(),
        paths: vec![ProbePath {
            id: 0,
            nodes: vec!["s1".into(), "s2".into()],
            egress_ports: vec![2],
        }],
        stats: PlanStats::default(),
    };
    let intents = deploy::intents(&plan, &fleet.map, BTreeMap::new(), SinkMode::Collector).unwrap();
    deploy::deploy(ix.clone(), &fleet.map, &intents, &opts())
        .await
        .unwrap();
    let query = StatusQuery {
        arbitrate_as: None,
        intents: Some(intents),
    };
    let st = deploy::status(ix.clone(), &fleet.map, &opts(), &query).await;
    for (s, id) in st.iter().zip(1..) {
        assert_eq!((s.device_id, s.switch_id), (id, Some(id as u32)), "{s:?}");
        assert!(!s.differs_from_plan(), "{s:?}");
        assert!(matches!(s.pipeline, Some(Pipeline::Ours { .. })), "{s:?}");
    }

    fleet.kill("s2");
    fleet.restart("s2");
    let st = deploy::status(ix, &fleet.map, &opts(), &query).await;
    assert_eq!(st[0].switch_id, Some(1));
    assert!(!st[0].differs_from_plan(), "{:?}", st[0]);
    let s2 = &st[1];
    assert_eq!(s2.error, None);
    assert_eq!(s2.switch_id, None, "{s2:?}");
    assert!(s2.differs_from_plan(), "{s2:?}");
    assert_eq!(s2.pipeline, Some(Pipeline::Ours { cookie: 0 }), "{s2:?}");
}
