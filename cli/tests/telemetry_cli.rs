//! `intpath query` and `intpath heatmap` on databases the collector's real
//! pipeline filled: errors are one failing line, and a database holding
//! absurd rows from an older collector still answers and draws.

use intpath_core::time::now_ns;
use intpath_test_support::on_both_backends;
use intpath_test_support::telemetry::{collect_frames, line_probe, lossy_db, ABSURD};
use std::path::Path;
use std::process::Command;

/// `intpath query --format json ARGS` on `db`.
fn query_json(db: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(["query", "--format", "json", "--db", db])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

on_both_backends!(queries_and_pictures_come_out_and_bad_ranges_fail_in_one_line);

async fn queries_and_pictures_come_out_and_bad_ranges_fail_in_one_line(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = lossy_db(db).await.to_string();
    let paths = query_json(&db, &["paths"]);
    assert_eq!(paths[0]["probes"], 201, "{paths}");
    assert_eq!(paths[1]["lost"], 10, "{paths}");
    let hottest = query_json(
        &db,
        &[
            "hottest", "--metric", "qdepth", "--stat", "max", "--top", "1",
        ],
    );
    assert_eq!(hottest[0]["link"], "s2:2->s3", "{hottest}");
    // The name as printed is taken back.
    let series = query_json(&db, &["link", hottest[0]["link"].as_str().unwrap()]);
    assert_eq!(series[0]["max"], 40.0, "{series}");

    let out = dir.path().join("x.png");
    let heatmap = |range: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_intpath"))
            .args(["heatmap", "--db", &db, "--metric", "loss", "--out"])
            .arg(&out)
            .arg("snapshot")
            .args(range)
            .env("RUST_BACKTRACE", "0")
            .env_remove("RUST_LIB_BACKTRACE")
            .output()
            .unwrap()
    };
    let drawn = heatmap(&[]);
    assert!(
        drawn.status.success(),
        "{}",
        String::from_utf8_lossy(&drawn.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&drawn.stdout).trim(),
        out.display().to_string()
    );
    assert!(out.metadata().unwrap().len() > 1000);
    std::fs::remove_file(&out).unwrap();

    let reversed = heatmap(&["--from", "4", "--to", "2"]);
    assert!(!reversed.status.success());
    let err = String::from_utf8_lossy(&reversed.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--from 4 is not before --to 2"), "{err}");
    assert!(!out.exists());
}

/// 100 good probes per path, then rows for absurd send times written
/// straight into the tables, as a collector without validation stored them.
async fn database_with_garbage(db: &Path) {
    // A second of probes, the last sent a second before they are collected.
    let t0 = now_ns() - 2_000_000_000;
    let frames: Vec<Vec<u8>> = (0..100)
        .flat_map(|seq| {
            (0..2).map(move |p| {
                line_probe(p, seq, t0 + u64::from(seq) * 10_000_000)
                    .to_bytes()
                    .unwrap()
            })
        })
        .collect();
    collect_frames(db, &frames).await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let bucket_ns = 100_000_000i64;
    for (i, t) in ABSURD.into_iter().enumerate() {
        let send = t as i64;
        let recv = t0 as i64;
        let bucket = send.div_euclid(bucket_ns);
        sqlx::query("UPDATE runs SET first_ns = MIN(first_ns, $1)")
            .bind(send)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO probes (run_id, path_id, seq, send_ns, recv_ns, e2e_ns, hops) \
             VALUES (1, 1, $1, $2, $3, $4, 4)",
        )
        .bind(1000 + i as i64)
        .bind(send)
        .bind(recv)
        .bind(recv.wrapping_sub(send))
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query("INSERT INTO path_buckets VALUES (1, 1, $1, 1, 999000, 0, 0, $2, $2)")
            .bind(bucket)
            .bind(recv.wrapping_sub(send))
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO link_buckets SELECT run_id, link_id, $1, 1, 9, 9, 9, 9, 9, 9 FROM link_buckets WHERE run_id = 1 LIMIT 1")
            .bind(bucket)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
}

/// `intpath heatmap --db DB --out PNG timeline ARGS`.
fn timeline(db: &Path, png: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(["heatmap", "--db"])
        .arg(db)
        .arg("--out")
        .arg(png)
        .arg("timeline")
        .args(args)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_holding_absurd_rows_still_answers_and_draws() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    database_with_garbage(&db).await;
    let png = dir.path().join("t.png");
    let out = timeline(&db, &png, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {err}", out.status);
    assert!(png.metadata().unwrap().len() > 0);
    assert!(err.contains("ignored"), "the garbage is reported: {err}");
    // Two seconds of data: about twenty columns, not decades of them.
    let img = image::open(&png).unwrap();
    assert!(img.width() < 2000, "{}", img.width());

    let paths = query_json(db.to_str().unwrap(), &["paths"]);
    for p in paths.as_array().unwrap() {
        assert_eq!(p["probes"], 100, "{p}");
        assert_eq!(p["lost"], 0, "{p}");
        assert!(p["e2e_mean_us"].as_f64().unwrap() >= 0.0, "{p}");
    }
    // An explicit absurd range stays clamped to the run.
    for range in [["--from=-1e8"], ["--to=1e8"]] {
        let out = timeline(&db, &png, &range);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{range:?}: {:?} {err}", out.status);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeline_over_a_long_range_merges_buckets_into_bounded_columns() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let t0 = now_ns() - 2_000_000_000;
    let frames: Vec<Vec<u8>> = (0..100)
        .map(|seq| {
            line_probe(0, seq, t0 + u64::from(seq) * 10_000_000)
                .to_bytes()
                .unwrap()
        })
        .collect();
    collect_frames(&db, &frames).await;
    let png = dir.path().join("t.png");
    // A day of 100 ms buckets: 864,000 of them, 44 to a column.
    let out = timeline(&db, &png, &["--to=86400"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?} {err}", out.status);
    assert!(err.contains("44 buckets per column"), "{err}");
    let img = image::open(&png).unwrap();
    let cols = intpath_plot::heatmap::MAX_TIMELINE_COLUMNS as u32;
    assert!(
        img.width() > cols / 2 && img.width() < cols + 1000,
        "{}",
        img.width()
    );
}
