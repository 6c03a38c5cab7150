//! The diagnosis on an application we did not write, with no INT and no
//! host map: the shop (`apps/shop`, eight Flask services traced only by the
//! official OpenTelemetry Python SDK with its default settings) exports
//! over OTLP/HTTP into the real receiver on loopback, and
//! `diagnose culprits --db DB` reads what was stored. A service slowed by
//! +40 ms on 30 % of its requests from halfway is named first; so is the
//! PostgreSQL database inventory reads, slowed the same way, which records
//! no spans of its own; so is the worker that handles frontend's jobs from
//! a queue after the request answered, slowed the same way; a run with no
//! fault names nobody.

mod common;

use common::named_first;
use intpath_diagnose::attribution::Verdict;
use intpath_diagnose::culprits::{CulpritKind, Method};
use intpath_diagnose::report;
use intpath_diagnose::{Diagnosis, Request};
use intpath_store::Db;
use intpath_test_support::apps;
use intpath_test_support::apps::RunLocal;
use intpath_test_support::postgres;
use intpath_test_support::shop::{self, Shop};
use std::path::Path;

/// One shop at a time: two at once would double the load on the machine.
static ONE_SHOP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const DURATION_S: u32 = 30;
/// About 0.7 of a core of the shop's Python (some 90 ms of CPU a request):
/// at 15 a second a slower CI machine saturated, timed requests out by the
/// hundred and left nothing to diagnose. 8 a second passes here with both
/// cores also running a busy loop each.
const RATE: u32 = 8;

/// Runs the shop for [`DURATION_S`] at [`RATE`] requests/s into a fresh
/// receiver storing into `db`, with `fault`; then diagnoses the database
/// as `diagnose culprits --db DB` does.
async fn run(db: &Path, seed: u64, fault: Option<&'static str>, pg: Option<String>) -> Diagnosis {
    run_with(db, seed, (fault, None), pg).await
}

/// [`run`] with `run-local --freeze` too: `(fault, freeze)`. Requests that
/// met the frozen service fail (its callers time out); the others may not.
async fn run_with(
    db: &Path,
    seed: u64,
    (fault, freeze): (Option<&'static str>, Option<&'static str>),
    pg: Option<String>,
) -> Diagnosis {
    let _alone = ONE_SHOP.lock().await;
    let (report, summary) = apps::received(db, move |otlp| {
        shop::run(&Shop {
            app: RunLocal {
                otlp,
                duration_s: DURATION_S,
                rate: RATE,
                seed,
                fault,
            },
            freeze,
            db: pg.as_deref(),
            env: &[],
        })
    })
    .await;
    match freeze {
        None => assert_eq!(report["load"]["failed"], 0, "{report}"),
        Some(_) => assert!(report["freeze"]["began_unix"].is_number(), "{report}"),
    }
    assert!(summary.spans_stored > 0, "{summary:?}");
    let req = Request::of_db(Db::from(db));
    tokio::task::spawn_blocking(move || common::diagnose(req))
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_slowed_from_halfway_is_named_first_from_the_traces_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = run(
        &dir.path().join("t.db"),
        11,
        Some("pricing:40:0.3:15"),
        None,
    )
    .await;
    assert!(d.evidence.is_none() && d.without_int.is_some());
    let (named, first) = named_first(&d);
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

/// inventory reads its stock from a real PostgreSQL server through
/// psycopg, traced by the official psycopg instrumentation: a client span
/// per query, and none from the server. Its queries slowed by +40 ms on
/// 30 % of them from halfway (inside the server, `pg_sleep`): the
/// database is named first, as a dependency, and inventory, whose requests
/// waited on it, is not named at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_database_is_named_and_not_the_service_that_waits_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::fresh_database("shop_slow_db").await;
    let d = run(
        &dir.path().join("t.db"),
        13,
        Some("database:40:0.3:15"),
        Some(pg),
    )
    .await;
    let (named, first) = named_first(&d);
    assert_eq!(first.kind, CulpritKind::Dependency, "{named:?}");
    assert!(first.name.starts_with("postgresql@127.0.0.1:"), "{named:?}");
    assert!(
        !named.iter().any(|c| c.name == "inventory"),
        "inventory waited on its database: {named:?}"
    );
    // 40 ms on 30 % of the queries for half the run, about four queries a
    // request: some 24 ms per request.
    let effect = first.effect_ms.unwrap();
    assert!((8.0..60.0).contains(&effect), "{first:?}");
    // The queries are the database's calls, not spans that failed to join.
    assert_eq!(d.rejects.count("client span without server span"), 0);
    // Call by call too: inventory's calls slowed by their queries are the
    // database's, not inventory's own work.
    let by_db: Vec<usize> = (0..d.edges.len())
        .filter(|&i| d.attr[i].verdict() == Verdict::Dependency)
        .collect();
    assert!(
        by_db.len() >= 20,
        "{} calls blamed on the database",
        by_db.len()
    );
    for &i in &by_db {
        assert_eq!(d.services[d.edges[i].callee as usize], "inventory");
        assert_eq!(report::blamed(&d, &d.edges[i], &d.attr[i]), first.name);
    }
}

/// With a database, frontend sends each page view as a job on a queue in
/// it (a PRODUCER span, the trace context in the row) and `activity`, a
/// worker, handles it later under a CONSUMER span: nobody waits on it, so
/// no client span times it. Its handling slowed by +40 ms on 30 % of the
/// jobs from halfway: the worker is named first, and frontend, which sent
/// the jobs, is not named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_worker_on_a_job_queue_is_named_though_nobody_waits_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::fresh_database("shop_slow_worker").await;
    let d = run(
        &dir.path().join("t.db"),
        14,
        Some("activity:40:0.3:15"),
        Some(pg),
    )
    .await;
    let (named, first) = named_first(&d);
    assert_eq!(
        (first.kind, first.name.as_str()),
        (CulpritKind::Service, "activity"),
        "{named:?}"
    );
    assert!(
        !named.iter().any(|c| c.name == "frontend"),
        "frontend only sent the jobs: {named:?}"
    );
    // 40 ms on 30 % of one job a request for half the run: some 6 ms per
    // request.
    let effect = first.effect_ms.unwrap();
    assert!((2.0..20.0).contains(&effect), "{first:?}");
    assert!(first.q_value.unwrap() <= 0.05, "{first:?}");
}

/// reviews' process stopped (SIGSTOP) for 8 s from 12 s into the load, as
/// a stalled VM would: the calls to it in that time time out at recommend
/// (3 s), and reviews takes them up once resumed, after their callers gave
/// up. Those calls are reviews' silence, and reviews is named for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_whose_process_stalls_is_named_by_the_calls_it_left_unanswered() {
    let dir = tempfile::tempdir().unwrap();
    let stall = (None, Some("reviews:12:8"));
    let d = run_with(&dir.path().join("t.db"), 13, stall, None).await;
    let (named, first) = named_first(&d);
    assert_eq!(
        (first.kind, first.name.as_str()),
        (CulpritKind::Service, "reviews"),
        "{named:?}"
    );
    let unanswered = first.evidence["unanswered_calls"].as_u64().unwrap_or(0);
    assert!(unanswered >= 10, "{first:?}");
    assert!(first.q_value.unwrap() <= 0.05, "{first:?}");
    // The requests that timed out failed (their spans' status ERROR), each
    // after a call of the frontend's own had failed: passed on from below.
    let front = (d.failed.iter()).find(|f| d.services[f.callee as usize] == "frontend");
    let front = front.unwrap_or_else(|| panic!("no failed calls into frontend: {:?}", d.failed));
    assert!(
        front.failed >= 5 && front.passed_on == front.failed,
        "{front:?}"
    );
}

/// No fault, with the database and its job queue: nobody is named, the
/// database and the worker included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_no_fault_names_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::fresh_database("shop_no_fault").await;
    let d = run(&dir.path().join("t.db"), 12, None, Some(pg)).await;
    let named = d.culprits(Method::Diagnose);
    assert!(named.is_empty(), "named without a fault: {named:?}");
    assert!(
        d.failed.is_empty(),
        "failed calls without a fault: {:?}",
        d.failed
    );
    let tested = d.tested();
    assert!(tested.len() >= 9, "{tested:?}");
    assert!(
        tested.iter().any(|c| c.kind == CulpritKind::Dependency),
        "the database was not tested: {tested:?}"
    );
    assert!(
        tested.iter().any(|c| c.name == "activity"),
        "the worker was not tested: {tested:?}"
    );
}
