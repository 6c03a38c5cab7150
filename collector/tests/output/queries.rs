//! Queries in every format, and the one-line errors of ranges that select
//! nothing, run backwards or would need unbounded memory.

use crate::*;
use intpath_collector::heatmap::{render, HeatmapKind};
use intpath_collector::query::{Metric, Stat, TimeRange};
use intpath_collector::report::{answer, Question};
use intpath_collector::store::Db;
use intpath_collector::table::Format;
use intpath_test_support::on_both_backends;

async fn query(db: &Db, format: Format, q: Question) -> String {
    answer(db, None, &q).await.unwrap().render(format)
}

on_both_backends!(queries_answer_in_every_format);

async fn queries_answer_in_every_format(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = filled_db(db).await;
    let hottest = || Question::Hottest {
        metric: Metric::Qdepth,
        stat: Stat::Max,
        range: ALL,
        top: 2,
    };
    let table = query(&db, Format::Table, hottest()).await;
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[1].contains("s2:2->s3") && lines[1].contains("40"),
        "{table}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&query(&db, Format::Json, Question::Paths(ALL)).await).unwrap();
    assert_eq!(json[0]["path"], 1);
    assert_eq!(json[0]["probes"], 201);
    assert_eq!(json[0]["duplicates"], 1);
    assert_eq!(json[1]["lost"], 10);
    assert_eq!(json[1]["loss_pct"], 5.0);
    assert!(json[1]["e2e_mean_us"].as_f64().is_some());

    let csv = query(
        &db,
        Format::Csv,
        Question::Link {
            link: "s2->s3".into(),
            metric: Metric::Qdepth,
            range: TimeRange {
                from: Some(0.0),
                to: Some(0.5),
            },
        },
    )
    .await;
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "t,samples,min,mean,max");
    assert_eq!(rows.len(), 6, "{csv}");
    // Ten probes, plus the duplicate of sequence 7.
    assert_eq!(rows[1], "0.0,11,40.0,40.0,40.0");

    let link = |link: &str| Question::Link {
        link: link.into(),
        metric: Metric::Qdepth,
        range: ALL,
    };
    let bad = answer(&db, None, &link("s1->s4")).await.unwrap_err();
    assert!(bad.to_string().contains("no link s1->s4"), "{bad}");
    let missing = answer(&Db::from(dir.path().join("nope.db")), None, &Question::Runs)
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("nope.db"), "{missing}");
    let runs = query(&db, Format::Csv, Question::Runs).await;
    assert_eq!(
        runs,
        "run,topology,plan,bucket_ms,store,probes,raw_probes\n1,line:4,test,100,raw,391,391\n"
    );
}

on_both_backends!(empty_reversed_and_huge_ranges_are_errors);

/// Ranges that select nothing, run backwards, overflow or would need
/// unbounded memory are one-line errors, and no file is written.
async fn empty_reversed_and_huge_ranges_are_errors(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = filled_db(db).await;
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
    let reversed = Question::Paths(range(3.0, 3.0));
    let e = answer(&db, None, &reversed).await.unwrap_err();
    assert!(e.to_string().contains("not before"), "{e}");
}

on_both_backends!(reversed_snapshot_fails_on_the_command_line);

/// The command line turns those errors into a failing exit and one line.
async fn reversed_snapshot_fails_on_the_command_line(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = filled_db(db).await;
    let out = dir.path().join("x.png");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["heatmap", "--db"])
        .arg(db.to_string())
        .arg("--out")
        .arg(&out)
        .args(["snapshot", "--from", "4", "--to", "2"])
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .unwrap();
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--from 4 is not before --to 2"), "{err}");
    assert!(!out.exists());
}
