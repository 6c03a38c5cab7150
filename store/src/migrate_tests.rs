//! A database an older collector wrote (the 0001 layout, one row per hop)
//! answers every query the same once the current code has opened it and
//! migrated it.

use crate::query as run;
use crate::samples;
use crate::store::sqlite_options as options;
use crate::{Pool, Store};
use sqlx::sqlite::SqlitePoolOptions;
use sqlx::SqlitePool;

/// A run with two links and three probes as 0001 stored them: 16-digit
/// switch clocks, a hop on no known link (null `link_id`), buckets.
const OLD_ROWS: &str = "
INSERT INTO runs (id, started_ns, first_ns, bucket_ns, topology, plan_algo)
    VALUES (1, 1700000000000000000, 1700000000000000000, 100000000, 'line:3', 'euler');
INSERT INTO switches VALUES (1, 0, 101, 's1'), (1, 1, 102, 's2'), (1, 2, 103, 's3');
INSERT INTO links VALUES (1, 0, 's1', 2, 's2', 1), (1, 1, 's2', 2, 's3', 1);
INSERT INTO paths VALUES (1, 1, '[\"s1\",\"s2\",\"s3\"]');
INSERT INTO path_links VALUES (1, 1, 0, 0), (1, 1, 1, 1);
INSERT INTO probes VALUES
    (1, 1, 1, 0, 1700000000000000000, 1700000000000300000, 300000, 3),
    (2, 1, 1, 1, 1700000000150000000, 1700000000150250000, 250000, 3),
    (3, 1, 1, 3, 1700000000210000000, 1700000000210400000, 400000, 2);
INSERT INTO hops VALUES
    (1, 0, 101, 0, 2, 0, 1700000000000100, 1700000000000140, 12, 40),
    (1, 1, 102, 1, 2, 1, 1700000000000190, 1700000000000195, 0, 5),
    (1, 2, 103, 1, 3, NULL, 1700000000000230, 1700000000000231, 1, 1),
    (2, 0, 101, 0, 2, 0, 1700000150000100, 1700000150000190, 30, 90),
    (2, 1, 102, 1, 2, 1, 1700000150000200, 1700000150000277, 25, 77),
    (2, 2, 103, 1, 3, NULL, 1700000150000300, 1700000150000300, 0, 0),
    (3, 0, 101, 0, 2, 0, 1700000210000050, 1700000210000051, 0, 1),
    (3, 1, 102, 1, 2, 1, 1700000210000090, 1700000210000390, 99, 300);
INSERT INTO link_buckets VALUES
    (1, 0, 17000000000, 1, 12, 12, 12, 40, 40, 40),
    (1, 1, 17000000000, 1, 0, 0, 0, 5, 5, 5),
    (1, 0, 17000000001, 2, 0, 30, 30, 1, 91, 90),
    (1, 1, 17000000001, 2, 25, 124, 99, 77, 377, 300);
INSERT INTO path_buckets VALUES
    (1, 1, 17000000000, 1, 0, 0, 0, 300000, 300000),
    (1, 1, 17000000001, 2, 1, 0, 0, 650000, 400000);
INSERT INTO path_stats VALUES (1, 1, 0, 3, 3, 0, 0, 1, 0);
INSERT INTO rejects VALUES (1, 'bad_path', 4);
";

type HopRow = (i64, i64, i64, i64, i64, Option<i64>, i64, i64, i64, i64);

/// Everything the readers of a store ask of hop records and runs.
#[derive(Debug, PartialEq)]
struct Answers {
    hops: Vec<HopRow>,
    /// `typeof` of every hop column, so integers stay integers.
    types: Vec<String>,
    samples: Vec<samples::LinkSample>,
    losses: Vec<samples::PathLoss>,
    runs: Vec<samples::Run>,
    summaries: Vec<run::RunSummary>,
    /// Once a table, a sum over collectors since 0008.
    rejects: Vec<(String, i64)>,
}

fn sqlite(store: &Store) -> &SqlitePool {
    match store.pool() {
        Pool::Sqlite(p) => p,
        Pool::Postgres(_) => unreachable!("a SQLite file"),
    }
}

async fn answers(store: &Store) -> Answers {
    let hops = sqlx::query_as(
        "SELECT probe_id, hop, switch_id, ingress_port, egress_port, link_id, ingress_ts_us, \
         egress_ts_us, qdepth, qdelay_us FROM hops ORDER BY probe_id, hop",
    )
    .fetch_all(sqlite(store))
    .await
    .unwrap();
    let types = sqlx::query_scalar(
        "SELECT typeof(probe_id) || typeof(hop) || typeof(switch_id) || typeof(ingress_port) || \
         typeof(egress_port) || typeof(link_id) || typeof(ingress_ts_us) || typeof(egress_ts_us) || \
         typeof(qdepth) || typeof(qdelay_us) FROM hops ORDER BY probe_id, hop",
    )
    .fetch_all(sqlite(store))
    .await
    .unwrap();
    let runs = samples::runs(store).await.unwrap();
    let info = run::RunInfo::load(store, Some(1)).await.unwrap();
    Answers {
        rejects: run::rejects(store, &info).await.unwrap(),
        hops,
        types,
        samples: samples::link_samples(store, 1, i64::MIN, i64::MAX)
            .await
            .unwrap(),
        losses: samples::path_loss(store, &runs[0], i64::MIN, i64::MAX)
            .await
            .unwrap(),
        runs,
        summaries: run::runs(store).await.unwrap(),
    }
}

#[tokio::test]
async fn a_database_in_the_first_layout_answers_the_same_after_migration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options(&path).create_if_missing(true))
        .await
        .unwrap();
    let mut first = crate::migrations::migrator(crate::migrations::SQLITE)
        .await
        .unwrap();
    first.migrations = first.migrations[..1].to_vec().into();
    first.run(&pool).await.unwrap();
    sqlx::raw_sql(OLD_ROWS).execute(&pool).await.unwrap();
    pool.close().await;

    let old = Store::open_existing(&path).await.unwrap();
    let before = answers(&old).await;
    old.close().await;
    assert_eq!(before.hops.len(), 8, "the old rows are there");
    assert_eq!(before.samples.len(), 6, "hops on known links");
    assert_eq!(before.rejects, [("bad_path".to_owned(), 4)]);

    let new = Store::open(&path).await.unwrap();
    let kind: String = sqlx::query_scalar("SELECT type FROM sqlite_master WHERE name = 'hops'")
        .fetch_one(sqlite(&new))
        .await
        .unwrap();
    assert_eq!(kind, "view", "the database was migrated");
    assert_eq!(answers(&new).await, before);
    new.close().await;
}
