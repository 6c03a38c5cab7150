//! The diagnosis on a second application we did not write, built on
//! another stack than the shop: the orders app (`apps/orders`, six gRPC
//! services on grpcio's thread pools, traced only by OpenTelemetry's gRPC
//! instrumentation, whose client spans name no peer address) exports over
//! OTLP/HTTP into the real receiver on loopback, and
//! `diagnose culprits --db DB` reads what was stored. A service slowed by
//! +40 ms on 30 % of its requests from halfway is named first, the shared
//! `ledger` (called by `users` and `payments`) as much as a leaf; a run
//! with no fault names nobody.

mod common;

use common::named_first;
use intpath_diagnose::culprits::{CulpritKind, Method};
use intpath_diagnose::{Diagnosis, Request};
use intpath_store::Db;
use intpath_test_support::apps::{self, RunLocal};

/// One app at a time: two at once would double the load on the machine.
static ONE_APP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const DURATION_S: u32 = 30;
/// About a third of a core of the app's Python here.
const RATE: u32 = 12;

/// Runs the orders app for [`DURATION_S`] at [`RATE`] requests/s with
/// `fault` into a fresh receiver; diagnoses what it stored as
/// `diagnose culprits --db DB` does.
async fn diagnosed(seed: u64, fault: Option<&'static str>) -> Diagnosis {
    let _alone = ONE_APP.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let (report, summary) = apps::received(&db, move |otlp| {
        let run = RunLocal {
            otlp,
            duration_s: DURATION_S,
            rate: RATE,
            seed,
            fault,
        };
        run.run("orders/orders.py", &[], &[])
    })
    .await;
    assert_eq!(report["load"]["failed"], 0, "{report}");
    assert!(summary.spans_stored > 0, "{summary:?}");
    let req = Request::of_db(Db::from(db.as_path()));
    tokio::task::spawn_blocking(move || common::diagnose(req))
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_grpc_service_slowed_from_halfway_is_named_first() {
    let d = diagnosed(21, Some("ledger:40:0.3:15")).await;
    // Every gRPC client span found its server span, peer address or not.
    assert_eq!(d.rejects.count("client span without server span"), 0);
    let (named, first) = named_first(&d);
    assert_eq!(
        (first.kind, first.name.as_str()),
        (CulpritKind::Service, "ledger"),
        "{named:?}"
    );
    // 40 ms on 30 % of ledger's two calls a request, for half the run:
    // some 12 ms per request, give or take what the machine's load does.
    let effect = first.effect_ms.unwrap();
    assert!((4.0..40.0).contains(&effect), "{first:?}");
    assert!(first.q_value.unwrap() <= 0.05, "{first:?}");
    // The services that wait on ledger are not its culprits.
    for waiter in ["users", "payments", "gateway"] {
        assert!(
            !named.iter().any(|c| c.name == waiter),
            "{waiter}: {named:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_run_with_no_fault_names_nobody() {
    let d = diagnosed(22, None).await;
    assert!(d.edges.len() > 2000, "{} edges", d.edges.len());
    let named = d.culprits(Method::Diagnose);
    assert!(named.is_empty(), "{named:?}");
}
