//! Queries in every format over a database the real pipeline filled, once
//! on SQLite and once on PostgreSQL, and the one-line errors of bad ranges
//! and names.

use intpath_store::query::{Metric, Stat, TimeRange};
use intpath_store::report::{answer, Question};
use intpath_store::table::Format;
use intpath_store::Db;
use intpath_test_support::on_both_backends;
use intpath_test_support::telemetry::{collect_frames, idle_frames, labelled_db, lossy_db};

const ALL: TimeRange = TimeRange {
    from: None,
    to: None,
};

async fn query(db: &Db, format: Format, q: Question) -> String {
    answer(db, None, &q).await.unwrap().render(format)
}

on_both_backends!(queries_answer_in_every_format);

async fn queries_answer_in_every_format(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = lossy_db(db).await;
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

on_both_backends!(reversed_ranges_are_errors);

async fn reversed_ranges_are_errors(db: String) {
    let db = lossy_db(db).await;
    let range = |from, to| TimeRange {
        from: Some(from),
        to: Some(to),
    };
    for (q, want) in [
        (
            Question::Paths(range(3.0, 3.0)),
            "--from 3 is not before --to 3",
        ),
        (Question::Paths(range(0.0, 1e300)), "out of range"),
    ] {
        let e = answer(&db, None, &q).await.unwrap_err().to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{q:?}: {e}");
    }
}

on_both_backends!(printed_names_are_accepted_and_idle_links_are_never_hottest);

/// Every queue but s2:2->s3's is empty: `hottest` lists that link alone,
/// however many are asked for, and each name it prints is taken back.
async fn printed_names_are_accepted_and_idle_links_are_never_hottest(db: String) {
    let db: Db = db.parse().unwrap();
    collect_frames(&db, &idle_frames()).await;
    let hottest = Question::Hottest {
        metric: Metric::Qdepth,
        stat: Stat::Mean,
        range: ALL,
        top: 10,
    };
    let json: serde_json::Value =
        serde_json::from_str(&query(&db, Format::Json, hottest).await).unwrap();
    let names: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["link"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["s2:2->s3"], "{json}");
    for name in [names[0], "s2:2", "s2->s3"] {
        let q = Question::Link {
            link: name.into(),
            metric: Metric::Qdepth,
            range: ALL,
        };
        let csv = query(&db, Format::Csv, q).await;
        assert!(
            csv.lines().nth(1).unwrap().ends_with(",40.0,40.0,40.0"),
            "{name}: {csv}"
        );
    }
    // The reverse direction is a link of the run, at zero: never confused.
    let q = |link: &str| Question::Link {
        link: link.into(),
        metric: Metric::Qdepth,
        range: ALL,
    };
    let back = query(&db, Format::Csv, q("s3:1->s2")).await;
    assert!(
        back.lines().nth(1).unwrap().ends_with(",0.0,0.0,0.0"),
        "{back}"
    );
    for bad in ["s2:2->s4", "s2:9->s3", "s2:2->"] {
        let e = answer(&db, None, &q(bad)).await.unwrap_err().to_string();
        assert!(e.contains(&format!("no link {bad} in run 1")), "{e}");
    }
}

on_both_backends!(tables_show_the_topology_labels);

/// A topology file labelling its switches: `hottest` gives each link's
/// ends by their labels beside its name.
async fn tables_show_the_topology_labels(db: String) {
    let db = labelled_db(db).await;
    let hottest = Question::Hottest {
        metric: Metric::Qdepth,
        stat: Stat::Mean,
        range: ALL,
        top: 1,
    };
    let csv = query(&db, Format::Csv, hottest).await;
    assert_eq!(csv.lines().next(), Some("link,value,unit,label"), "{csv}");
    assert_eq!(
        csv.lines().nth(1),
        Some("s1:1->s2,5.0,packets,Northport->Eastfield"),
        "{csv}"
    );
}
