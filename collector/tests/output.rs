//! Heatmaps and queries over a database the real pipeline filled.

mod common;

use common::*;
use intpath_collector::heatmap::{
    draw_snapshot, draw_timeline, render, Cell, Grid, HeatmapKind, HeatmapRequest, Matrix, Scale,
    Timeline,
};
use intpath_collector::links::DirLink;
use intpath_collector::query::{self, LinkValue, Metric, RunInfo, Stat, TimeRange};
use intpath_collector::report::{answer, Question};
use intpath_collector::store::Db;
use intpath_collector::table::Format;
use intpath_collector::Store;
use intpath_test_support::on_both_backends;
use std::path::PathBuf;

/// Path 2 loses sequence numbers 150..160; path 1 delivers sequence 7 twice.
async fn filled_db(db: String) -> Db {
    let db: Db = db.parse().unwrap();
    let links = line4();
    let plan = plan();
    let mut frames = Vec::new();
    for p in probes(&links, &plan, 200) {
        let seq = p.payload.sequence;
        if p.payload.path_id == 2 && (150..160).contains(&seq) {
            continue;
        }
        let bytes = p.to_bytes().unwrap();
        if p.payload.path_id == 1 && seq == 7 {
            frames.push(bytes.clone());
        }
        frames.push(bytes);
    }
    let s = collect_frames(&db, &frames).await;
    assert_eq!(s.probes, 391);
    db
}

fn luminance(img: &image::RgbImage, (x, y): (i32, i32)) -> f64 {
    let p = img.get_pixel(x as u32, y as u32).0;
    0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2])
}

fn rgb_at(img: &image::RgbImage, (x, y): (i32, i32)) -> [u8; 3] {
    img.get_pixel(x as u32, y as u32).0
}

fn request(db: &Db, out: PathBuf, kind: HeatmapKind) -> HeatmapRequest {
    HeatmapRequest {
        db: db.clone(),
        run: None,
        metric: Metric::Qdepth,
        stat: Stat::Mean,
        out,
        kind,
    }
}

const ALL: TimeRange = TimeRange {
    from: None,
    to: None,
};

on_both_backends!(snapshot_shows_the_congested_link_hotter);

async fn snapshot_shows_the_congested_link_hotter(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = filled_db(db).await;
    let store = Store::open_existing(&db).await.unwrap();
    let run = RunInfo::load(&store, None).await.unwrap();
    let w = run.window(Some(0.0), Some(1.0)).unwrap();
    assert_eq!(w.len(), 10);
    let values = query::link_values(&store, &run, Metric::Qdepth, Stat::Mean, w, false)
        .await
        .unwrap();
    let m = Matrix::from_links(&run, &values);
    assert_eq!(m.cells[1][2], Cell::Value(40.0));
    assert_eq!(m.cells[2][3], Cell::Value(1.0));
    assert_eq!(m.cells[0][3], Cell::NoLink);
    let scale = Scale::fit(
        values.iter().map(|v| v.value),
        "queue depth (packets)".into(),
    );
    let out = dir.path().join("snap.png");
    let grid = draw_snapshot(&m, &scale, "test snapshot", &out).unwrap();
    let img = image::open(&out).unwrap().to_rgb8();
    let hot = luminance(&img, grid.cell_center(1, 2));
    let idle = luminance(&img, grid.cell_center(2, 3));
    assert!(hot + 50.0 < idle, "hot {hot} vs idle {idle}");
    assert_eq!(rgb_at(&img, grid.cell_center(0, 3)), [255, 255, 255]);
    // Labels and legend put dark pixels outside the grid.
    let dark_left = (0..grid.x0 as u32)
        .flat_map(|x| (0..img.height()).map(move |y| (x, y)))
        .filter(|&(x, y)| img.get_pixel(x, y).0[0] < 100)
        .count();
    assert!(dark_left > 50, "no row labels drawn");
    store.close().await;
}

on_both_backends!(timeline_and_frames_follow_the_congestion_in_time);

async fn timeline_and_frames_follow_the_congestion_in_time(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = filled_db(db).await;
    let store = Store::open_existing(&db).await.unwrap();
    let run = RunInfo::load(&store, None).await.unwrap();
    let w = run.window(None, None).unwrap();
    let values = query::link_values(&store, &run, Metric::Qdelay, Stat::Max, w, true)
        .await
        .unwrap();
    let hot = hot_link(&line4());
    let row_links: Vec<u32> = {
        let mut v: Vec<u32> = values.iter().map(|v| v.link).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut cells = vec![vec![Cell::NoData; w.len()]; row_links.len()];
    for v in &values {
        let r = row_links.binary_search(&v.link).unwrap();
        cells[r][(v.bucket - w.from) as usize] = Cell::Value(v.value);
    }
    let t = Timeline {
        links: row_links
            .iter()
            .map(|&l| run.links[l as usize].to_string())
            .collect(),
        times: (w.from..=w.to).map(|b| run.seconds(b)).collect(),
        bucket_s: 0.1,
        cells,
    };
    let scale = Scale::fit(
        values.iter().map(|v| v.value),
        "max queueing delay (µs)".into(),
    );
    let out = dir.path().join("timeline.png");
    let grid: Grid = draw_timeline(&t, &scale, "test timeline", &out).unwrap();
    let img = image::open(&out).unwrap().to_rgb8();
    let r = row_links.binary_search(&hot).unwrap();
    let busy = luminance(&img, grid.cell_center(r, 3));
    let calm = luminance(&img, grid.cell_center(r, 15));
    assert!(busy + 50.0 < calm, "busy {busy} vs calm {calm}");

    // Frames through the typed call: one GIF frame and one PNG per second.
    let frames = HeatmapKind::Frames {
        range: ALL,
        step_s: 1.0,
        delay_ms: 200,
    };
    let gif = dir.path().join("frames.gif");
    render(&request(&db, gif.clone(), frames)).await.unwrap();
    let decoder = image::codecs::gif::GifDecoder::new(std::fs::File::open(&gif).unwrap()).unwrap();
    use image::AnimationDecoder;
    let n = decoder.into_frames().collect_frames().unwrap().len();
    assert_eq!(n, 2);
    let pngs = dir.path().join("frames");
    let files = render(&request(&db, pngs.clone(), frames)).await.unwrap();
    assert_eq!(files.len(), 2);
    assert!(pngs.join("frame-0000.png").is_file() && pngs.join("frame-0001.png").is_file());
    assert!(!pngs.join("frame-0002.png").exists());

    let svg = dir.path().join("snap.svg");
    render(&request(&db, svg.clone(), HeatmapKind::Snapshot(ALL)))
        .await
        .unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("s3"));
    store.close().await;
}

on_both_backends!(loss_lands_on_the_links_of_the_lossy_path_only);

async fn loss_lands_on_the_links_of_the_lossy_path_only(db: String) {
    let db = filled_db(db).await;
    let store = Store::open_existing(&db).await.unwrap();
    let run = RunInfo::load(&store, None).await.unwrap();
    let values = query::link_values(
        &store,
        &run,
        Metric::Loss,
        Stat::Mean,
        run.window(None, None).unwrap(),
        false,
    )
    .await
    .unwrap();
    let links = line4();
    let loss = |from: &str, port| {
        let l = links.egress_link(from, port).unwrap();
        values.iter().find(|v| v.link == l).unwrap().value
    };
    assert!((loss("s2", 1) - 5.0).abs() < 1e-9, "{values:?}");
    assert_eq!(loss("s2", 2), 0.0);
    store.close().await;
}

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
        "run,topology,plan,bucket_ms,probes\n1,line:4,test,100,391\n"
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
            HeatmapKind::Timeline {
                range: range(0.0, 1e7),
                hosts: false,
            },
            "a timeline shows at most",
        ),
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

/// FatTree k = 8: 80 switches, 256 cables between them.
#[test]
fn fat_tree_k8_snapshot_is_readable() {
    let k = 8;
    let mut switches = Vec::new();
    let mut links = Vec::new();
    let name = |kind: &str, a: usize, b: usize| format!("{kind}{a}_{b}");
    for c in 0..(k / 2) * (k / 2) {
        switches.push((format!("core{c}"), 0));
    }
    for pod in 0..k {
        for i in 0..k / 2 {
            switches.push((name("agg", pod, i), 0));
        }
        for i in 0..k / 2 {
            switches.push((name("edge", pod, i), 0));
        }
    }
    let mut cable = |a: String, b: String| {
        let ap = links.iter().filter(|l: &&DirLink| l.src == a).count() as u16 + 1;
        let bp = links.iter().filter(|l: &&DirLink| l.src == b).count() as u16 + 1;
        links.push(DirLink {
            src: a.clone(),
            src_port: ap,
            dst: b.clone(),
            dst_port: bp,
        });
        links.push(DirLink {
            src: b,
            src_port: bp,
            dst: a,
            dst_port: ap,
        });
    };
    for pod in 0..k {
        for a in 0..k / 2 {
            for e in 0..k / 2 {
                cable(name("agg", pod, a), name("edge", pod, e));
            }
            for c in 0..k / 2 {
                cable(name("agg", pod, a), format!("core{}", a * k / 2 + c));
            }
        }
    }
    assert_eq!(switches.len(), 80);
    assert_eq!(links.len(), 2 * 256);
    let run = RunInfo {
        id: 1,
        bucket_ns: 100_000_000,
        first_ns: Some(0),
        buckets: Some((0, 0)),
        switches: switches
            .into_iter()
            .enumerate()
            .map(|(i, (n, _))| (n, i as u32))
            .collect(),
        links,
    };
    let values: Vec<LinkValue> = (0..run.links.len() as u32)
        .map(|l| LinkValue {
            link: l,
            bucket: 0,
            value: f64::from(l % 17),
        })
        .collect();
    let m = Matrix::from_links(&run, &values);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k8.png");
    let scale = Scale::fit(
        values.iter().map(|v| v.value),
        "mean queue depth (packets)".into(),
    );
    let grid = draw_snapshot(&m, &scale, "FatTree k=8", &out).unwrap();
    assert!(
        grid.cell_w >= 12,
        "cells too small to read: {}",
        grid.cell_w
    );
    let img = image::open(&out).unwrap().to_rgb8();
    assert!(
        img.width() <= 1600 && img.height() <= 1600,
        "{}x{}",
        img.width(),
        img.height()
    );
    if let Ok(keep) = std::env::var("INTPATH_KEEP_PNG") {
        std::fs::copy(&out, keep).unwrap();
    }
}
