//! The diagnosis on an application we did not write, with no INT and no
//! host map: the shop (`apps/shop`, eight Flask services traced only by the
//! official OpenTelemetry Python SDK with its default settings) exports
//! over OTLP/HTTP into the real receiver on loopback, and
//! `diagnose culprits --db DB` reads what was stored. A service slowed by
//! +40 ms on 30 % of its requests from halfway is named first; a run with
//! no fault names nobody.

use intpath_collector::otlp::{Config, Receiver};
use intpath_diagnose::culprits::{CulpritKind, Method};
use intpath_diagnose::{Diagnosis, Options, Request};
use intpath_store::{Db, Store};
use intpath_test_support::shop::{self, Shop};
use std::path::Path;

/// One shop at a time: two at once would double the load on the machine.
static ONE_SHOP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const DURATION_S: u32 = 30;
const RATE: u32 = 15;

/// Runs the shop for [`DURATION_S`] at [`RATE`] requests/s into a fresh
/// receiver storing into `db`, with `fault`; then diagnoses the database
/// as `diagnose culprits --db DB` does.
async fn run(db: &Path, seed: u64, fault: Option<&'static str>) -> Diagnosis {
    let _alone = ONE_SHOP.lock().await;
    let cfg = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Config::default()
    };
    let receiver = Receiver::start(Store::open(Db::from(db)).await.unwrap(), cfg)
        .await
        .unwrap();
    let otlp = format!("http://{}", receiver.local_addr());
    let report = tokio::task::spawn_blocking(move || {
        shop::run(&Shop {
            otlp: &otlp,
            duration_s: DURATION_S,
            rate: RATE,
            seed,
            fault,
            env: &[],
        })
    })
    .await
    .unwrap();
    assert_eq!(report["load"]["failed"], 0, "{report}");
    let summary = receiver.shutdown().await.unwrap();
    assert!(summary.spans_stored > 0, "{summary:?}");
    let req = Request::of_db(Db::from(db));
    tokio::task::spawn_blocking(move || intpath_diagnose::run(&req, &Options::default()))
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_slowed_from_halfway_is_named_first_from_the_traces_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = run(&dir.path().join("t.db"), 11, Some("pricing:40:0.3:15")).await;
    assert!(d.evidence.is_none() && d.without_int.is_some());
    let named = d.culprits(Method::Diagnose);
    let first = named.first().unwrap_or_else(|| {
        panic!(
            "nothing named; tested: {:?}",
            &d.tested()[..3.min(d.tested().len())]
        )
    });
    assert_eq!(
        (first.kind, first.name.as_str()),
        (CulpritKind::Service, "pricing"),
        "{named:?}"
    );
    // 40 ms on 30 % of pricing's calls for half the run, and pricing is
    // called about twice a request: some 10 ms per request, give or take
    // what the machine's load does to the estimate.
    let effect = first.effect_ms.unwrap();
    assert!((3.0..40.0).contains(&effect), "{first:?}");
    assert!(first.q_value.unwrap() <= 0.05, "{first:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_no_fault_names_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let d = run(&dir.path().join("t.db"), 12, None).await;
    let named = d.culprits(Method::Diagnose);
    assert!(named.is_empty(), "named without a fault: {named:?}");
    assert!(d.tested().len() >= 8, "{:?}", d.tested());
}
