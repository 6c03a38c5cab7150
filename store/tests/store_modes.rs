//! Runs stored with `collect --store buckets|sampled:N` (real SQLite files
//! and real PostgreSQL databases filled by the real pipeline): queries
//! answer from buckets alone as from every raw row, and hop samples, which
//! only raw rows hold, are a clear error where there are none.

use intpath_store::query::{Metric, Stat, TimeRange};
use intpath_store::report::{answer, Question};
use intpath_store::table::{Format, Table};
use intpath_store::{samples, Store, StoreError, StoreMode};
use intpath_test_support::on_both_backends;
use intpath_test_support::telemetry::{mode_db, BASE_NS};

on_both_backends!(queries_answer_from_buckets_alone);

async fn queries_answer_from_buckets_alone(base: String) {
    let raw = mode_db(&base, StoreMode::Raw).await;
    let buckets = mode_db(&base, StoreMode::Buckets).await;
    let hottest = Question::Hottest {
        metric: Metric::Qdepth,
        stat: Stat::Mean,
        range: TimeRange::default(),
        top: 3,
    };
    for q in [hottest, Question::Paths(TimeRange::default())] {
        // The first six columns: e2e delays end at the collector's clock.
        let csv = |t: Table| {
            let text = t.render(Format::Csv);
            let cut = |l: &str| l.split(',').take(6).collect::<Vec<_>>().join(",");
            text.lines().map(cut).collect::<Vec<_>>()
        };
        let from_raw = csv(answer(&raw, None, &q).await.unwrap());
        let from_buckets = csv(answer(&buckets, None, &q).await.unwrap());
        assert_eq!(from_raw, from_buckets, "{q:?}");
        assert!(from_raw.len() > 2, "{from_raw:?}");
    }
    assert!(answer(
        &buckets,
        None,
        &Question::Hottest {
            metric: Metric::Qdepth,
            stat: Stat::Max,
            range: TimeRange::default(),
            top: 1,
        }
    )
    .await
    .unwrap()
    .render(Format::Csv)
    .contains("s2:2->s3,40"));
}

on_both_backends!(hop_samples_of_a_buckets_only_run_are_a_clear_error);

async fn hop_samples_of_a_buckets_only_run_are_a_clear_error(base: String) {
    let db = mode_db(&base, StoreMode::Buckets).await;
    let store = Store::open_existing(&db).await.unwrap();
    let runs = samples::runs(&store).await.unwrap();
    let (from, to) = runs[0]
        .span_ns
        .expect("a buckets-only run still has a span");
    assert_eq!(from, BASE_NS as i64);
    assert!(to >= BASE_NS as i64 + 1_990_000_000, "{to}");
    let err = samples::link_samples(&store, runs[0].id, from, to)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::BucketsOnly(1)), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("--store buckets") && !msg.contains('\n'),
        "{msg}"
    );
    // Loss per path comes from buckets and still answers.
    let loss = samples::path_loss(&store, &runs[0], from, to)
        .await
        .unwrap();
    assert_eq!(loss.iter().map(|l| l.lost).sum::<i64>(), 10);
    store.close().await;

    let sampled = mode_db(&base, "sampled:5".parse().unwrap()).await;
    let store = Store::open_existing(&sampled).await.unwrap();
    let samples = samples::link_samples(&store, 1, i64::MIN, i64::MAX)
        .await
        .unwrap();
    // 41 + 38 probes kept, one sample per link crossed (4 per probe: three
    // between switches and the sink's towards its collector host).
    assert_eq!(samples.len(), (41 + 38) * 4);
    store.close().await;
}
