//! Reconstruction on an application we did not write, with real threads:
//! the shop (`apps/shop`: Werkzeug takes each request on a thread of its
//! own, sequential calls leave from that thread, parallel ones from a
//! client pool) traced by the official Python SDK, plus the thread each
//! span started on (`test-support/python/thread_ids`, what the Java agent
//! records by default), exported over OTLP/HTTP into the real receiver and
//! read back from its database, parents stripped and scored.

use intpath_collector::otlp::{Config, Receiver};
use intpath_diagnose::reconstruct::executors::Grain;
use intpath_diagnose::reconstruct::request::{run, Graph, Method, Outcome, Request};
use intpath_diagnose::spans::{from_store, Span};
use intpath_store::{Db, Store};
use intpath_test_support::shop::{self, Shop};

const RATE: u32 = 8;

/// The shop for `duration_s` at [`RATE`] requests/s with thread ids on its
/// spans; the spans as the receiver stored them.
async fn shop_spans(seed: u64, duration_s: u32) -> Vec<Span> {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::from(dir.path().join("t.db").as_path());
    let cfg = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Config::default()
    };
    let receiver = Receiver::start(Store::open(db.clone()).await.unwrap(), cfg)
        .await
        .unwrap();
    let otlp = format!("http://{}", receiver.local_addr());
    let agent = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../test-support/python/thread_ids"
    );
    let report = tokio::task::spawn_blocking(move || {
        shop::run(&Shop {
            otlp: &otlp,
            duration_s,
            rate: RATE,
            seed,
            fault: None,
            db: None,
            env: &[("PYTHONPATH", agent)],
        })
    })
    .await
    .unwrap();
    assert_eq!(report["load"]["failed"], 0, "{report}");
    receiver.shutdown().await.unwrap();
    let stored = Store::open(db).await.unwrap().spans().await.unwrap();
    from_store(&stored).spans
}

fn reconstruct(train: &[Span], test: &[Span], threads: bool) -> Outcome {
    run(Request {
        spans: test.to_vec(),
        graph: Graph::Train(train.to_vec()),
        method: Method::Tw,
        blackbox: Vec::new(),
        strip_parents: true,
        telemetry: None,
        rounds: 3,
        threads,
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shops_request_threads_bind_their_calls_and_its_client_pool_stays_free() {
    let train = shop_spans(1, 6).await;
    let test = shop_spans(2, 20).await;
    let client_on = |prefix: &str| {
        test.iter()
            .filter(|s| s.kind == intpath_diagnose::spans::Kind::Client)
            .filter(|s| s.endpoint.thread.as_deref().unwrap_or("").contains(prefix))
            .count()
    };
    // Both kinds of thread send calls: the request threads (`Thread-N`)
    // and the pool (`call_N`).
    assert!(client_on("/Thread-") > 100 && client_on("/call_") > 100);

    let bound = reconstruct(&train, &test, true);
    let alone = reconstruct(&train, &test, false);
    let by =
        |o: &Outcome, service: &str| o.rec.bound_by[o.rpcs.service_id(service).unwrap() as usize];
    for service in ["frontend", "catalog", "recommend", "cart"] {
        assert_eq!(by(&bound, service), Some(Grain::Thread), "{service}");
        assert_eq!(by(&alone, service), None, "{service}");
    }
    // No call sent by a request thread is bound to another thread's
    // request: every one whose callee answered on the request's own
    // thread is right.
    let (b, a) = (bound.score.unwrap(), alone.score.unwrap());
    let into = |s: &intpath_diagnose::reconstruct::accuracy::Score, callee: &str| {
        s.per_callee
            .iter()
            .find(|c| c.service == callee)
            .unwrap()
            .accuracy
    };
    assert_eq!(into(&b, "auth"), 1.0, "frontend's one sequential call");
    assert!(
        b.links >= 0.95 && b.links >= a.links - 0.005,
        "{} vs {}",
        b.links,
        a.links
    );
}
