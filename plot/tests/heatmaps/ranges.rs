//! Ranges that select nothing, run backwards or would need unbounded memory
//! are one-line errors that write no file; a run that kept buckets only
//! draws the same pictures as one that kept every raw row.

use crate::*;
use intpath_plot::heatmap::{render, HeatmapKind};
use intpath_test_support::on_both_backends;

on_both_backends!(empty_reversed_and_huge_ranges_are_errors);

async fn empty_reversed_and_huge_ranges_are_errors(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = lossy_db(db).await;
    let out = dir.path().join("x.png");
    let range = |from, to| TimeRange {
        from: Some(from),
        to: Some(to),
    };
    let cases = [
        (
            HeatmapKind::Snapshot(range(4.0, 2.0)),
            "--from 4 is not before --to 2",
        ),
        (
            HeatmapKind::Snapshot(range(50.0, 60.0)),
            "no telemetry in run 1 between 50.0 and 60.0 s",
        ),
        (HeatmapKind::Snapshot(range(0.0, 1e300)), "out of range"),
        (HeatmapKind::Snapshot(range(f64::NAN, 1.0)), "out of range"),
        (
            HeatmapKind::Frames {
                range: ALL,
                step_s: 1e-9,
                delay_ms: 1,
            },
            "frames; at most 10000",
        ),
        (
            HeatmapKind::Frames {
                range: ALL,
                step_s: 0.0,
                delay_ms: 1,
            },
            "must be a positive number",
        ),
    ];
    for (kind, want) in cases {
        let e = render(&request(&db, out.clone(), kind)).await.unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(want) && !msg.contains('\n'), "{kind:?}: {msg}");
        assert!(!out.exists(), "{kind:?} wrote a file");
    }
}

on_both_backends!(a_buckets_only_run_draws_what_a_raw_run_draws);

async fn a_buckets_only_run_draws_what_a_raw_run_draws(base: String) {
    let raw = mode_db(&base, StoreMode::Raw).await;
    let buckets = mode_db(&base, StoreMode::Buckets).await;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("raw.png"), dir.path().join("buckets.png"));
    let timeline = |db: &Db, out: PathBuf| HeatmapRequest {
        stat: Stat::Max,
        ..request(
            db,
            out,
            HeatmapKind::Timeline {
                range: ALL,
                hosts: false,
            },
        )
    };
    render(&timeline(&raw, a.clone())).await.unwrap();
    render(&timeline(&buckets, b.clone())).await.unwrap();
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(a.len() > 1000);
    assert_eq!(a, b, "the buckets-only heatmap differs from the raw run's");
}
