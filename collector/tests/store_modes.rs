//! `collect --store raw|buckets|sampled:N` on real SQLite files and real
//! PostgreSQL databases filled by the real pipeline from the same probes:
//! raw rows kept per mode, buckets identical in every mode, and `watch`'s
//! progress the same from each (queries and heatmaps over a buckets-only
//! run: `store/tests/store_modes.rs`, `plot/tests/heatmaps`).

use intpath_store::{query, Db, Store, StoreMode};
use intpath_test_support::on_both_backends;
use intpath_test_support::telemetry::mode_db;

/// `lossy_frames`: path 1 delivers 201 probes (sequence 7 twice), path 2
/// 190 (150..160 lost).
const ARRIVALS: [(i64, u64); 2] = [(1, 201), (2, 190)];
const HOPS_PER_PROBE: i64 = 4;

/// The database read directly, as a user's own SQL would.
enum Sql {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

/// Runs `$body` with `$p` bound to whichever pool `$sql` holds.
macro_rules! with_pool {
    ($sql:expr, $p:ident => $body:expr) => {
        match $sql {
            Sql::Sqlite($p) => $body,
            Sql::Postgres($p) => $body,
        }
    };
}

async fn sql(db: &Db) -> Sql {
    match db {
        Db::Sqlite(path) => {
            let opts = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(path)
                .read_only(true);
            Sql::Sqlite(sqlx::SqlitePool::connect_with(opts).await.unwrap())
        }
        Db::Postgres(url) => Sql::Postgres(sqlx::PgPool::connect(url).await.unwrap()),
    }
}

/// Raw rows per path, and the sequence numbers kept, in arrival order.
async fn raw_rows(pool: &Sql) -> Vec<(i64, Vec<i64>)> {
    let rows: Vec<(i64, i64, i64)> = with_pool!(pool, p => {
        sqlx::query_as("SELECT path_id, seq, hops FROM probes ORDER BY path_id, id")
            .fetch_all(p)
            .await
            .unwrap()
    });
    let mut out: Vec<(i64, Vec<i64>)> = Vec::new();
    for (path, seq, hops) in rows {
        assert_eq!(hops, HOPS_PER_PROBE);
        match out.last_mut() {
            Some((p, seqs)) if *p == path => seqs.push(seq),
            _ => out.push((path, vec![seq])),
        }
    }
    out
}

type LinkBucket = (i64, i64, i64, i64, i64, i64, i64, i64, i64);
// Not e2e_*: a probe's receive time is the collector's clock.
type PathBucket = (i64, i64, i64, i64, i64, i64);
type PathStat = (i64, i64, i64, i64, i64, i64, i64, i64);

/// Every bucket and running total the run stored.
async fn buckets(pool: &Sql) -> (Vec<LinkBucket>, Vec<PathBucket>, Vec<PathStat>) {
    let out: (Vec<LinkBucket>, Vec<PathBucket>, Vec<PathStat>) = with_pool!(pool, p => (
        sqlx::query_as(
            "SELECT link_id, bucket, samples, qdepth_min, qdepth_sum, qdepth_max, \
             qdelay_min, qdelay_sum, qdelay_max FROM link_buckets ORDER BY link_id, bucket",
        )
        .fetch_all(p)
        .await
        .unwrap(),
        sqlx::query_as(
            "SELECT path_id, bucket, probes, lost, duplicates, reordered \
             FROM path_buckets ORDER BY path_id, bucket",
        )
        .fetch_all(p)
        .await
        .unwrap(),
        sqlx::query_as(
            "SELECT path_id, first_seq, last_seq, received, duplicates, reordered, lost, \
             restarts FROM path_stats ORDER BY path_id",
        )
        .fetch_all(p)
        .await
        .unwrap(),
    ));
    assert!(!out.0.is_empty() && !out.1.is_empty() && !out.2.is_empty());
    out
}

on_both_backends!(each_mode_keeps_its_raw_rows_and_every_bucket);

async fn each_mode_keeps_its_raw_rows_and_every_bucket(base: String) {
    let modes = [
        StoreMode::Raw,
        StoreMode::Buckets,
        "sampled:3".parse().unwrap(),
        "sampled:7".parse().unwrap(),
    ];
    let mut reference = None;
    for mode in modes {
        let db = mode_db(&base, mode).await;
        let store = Store::open_existing(&db).await.unwrap();
        assert_eq!(store.store_mode(1).await.unwrap(), mode);
        let pool = sql(&db).await;
        let kept = raw_rows(&pool).await;
        match mode {
            StoreMode::Raw => assert_eq!(
                kept.iter()
                    .map(|(p, s)| (*p, s.len() as u64))
                    .collect::<Vec<_>>(),
                ARRIVALS
            ),
            StoreMode::Buckets => assert!(kept.is_empty(), "{kept:?}"),
            StoreMode::Sampled(n) => {
                let n = u64::from(n.get());
                for ((path, seqs), (want_path, arrivals)) in kept.iter().zip(ARRIVALS) {
                    assert_eq!(*path, want_path);
                    // ⌈arrivals / N⌉: arrivals 0, N, 2N, ...
                    assert_eq!(
                        seqs.len() as u64,
                        arrivals.div_ceil(n),
                        "{mode} path {path}"
                    );
                    assert_eq!(seqs[0], 0);
                }
                // Path 1's arrivals are 0..=7, 7 (again), 8, ...: the k-th
                // kept probe is arrival k·N.
                let arrival_seq = |a: u64| if a <= 7 { a } else { a - 1 } as i64;
                let want: Vec<i64> = (0..201).step_by(n as usize).map(arrival_seq).collect();
                assert_eq!(kept[0].1, want, "{mode}");
            }
        }
        let listed = query::runs(&store).await.unwrap();
        assert_eq!(listed[0].store, mode.to_string());
        assert_eq!(listed[0].probes, 391);
        let raw: usize = kept.iter().map(|(_, s)| s.len()).sum();
        assert_eq!(listed[0].raw_probes, raw as i64);
        assert_eq!(listed[0].hops, raw as i64 * HOPS_PER_PROBE);

        let b = buckets(&pool).await;
        with_pool!(pool, p => p.close().await);
        let (_, progress) = query::path_progress(&store).await.unwrap().unwrap();
        let received: Vec<_> = progress.iter().map(|p| p.received).collect();
        assert_eq!(received, [Some(200), Some(190)], "{mode}");
        match &reference {
            None => reference = Some(b),
            Some(r) => assert_eq!(&b, r, "{mode}: buckets differ from raw's"),
        }
        store.close().await;
    }
}
