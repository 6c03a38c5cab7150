//! Heatmaps drawn from the filled database: the congested link, its time
//! course, loss on the lossy path, and a FatTree-sized matrix.

use crate::*;
use intpath_plot::heatmap::{
    draw, render, render_outlined, Cell, Grid, HeatmapKind, Matrix, Scale, Timeline,
};
use intpath_store::counters::PortReading;
use intpath_store::links::DirLink;
use intpath_store::query::{self, LinkValue, Metric, RunInfo, Stat};
use intpath_test_support::on_both_backends;

on_both_backends!(snapshot_shows_the_congested_link_hotter);

async fn snapshot_shows_the_congested_link_hotter(db: String) {
    let Filled {
        dir,
        db: _,
        store,
        run,
    } = Filled::open(db).await;
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
    let grid = draw(&m, &scale, "test snapshot", &out, &[]).unwrap();
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
    let Filled {
        dir,
        db,
        store,
        run,
    } = Filled::open(db).await;
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
    let names: Vec<String> = row_links
        .iter()
        .map(|&l| run.links[l as usize].to_string())
        .collect();
    let t = Timeline {
        shown: names.clone(),
        links: names,
        times: (w.from..=w.to).map(|b| run.seconds(b)).collect(),
        bucket_s: 0.1,
        cells,
    };
    let scale = Scale::fit(
        values.iter().map(|v| v.value),
        "max queueing delay (µs)".into(),
    );
    let out = dir.path().join("timeline.png");
    let grid: Grid = draw(&t, &scale, "test timeline", &out, &[]).unwrap();
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

on_both_backends!(loss_lands_on_the_link_that_dropped_and_no_other);

/// Path 2 lost probes, but the counters say s2:2->s3 dropped a tenth of
/// what s2 sent: the loss snapshot paints that link, clears s1:2->s2 (its
/// counters agree), and shows every link without counter data as "no
/// data", never with the loss of a path that crosses it.
async fn loss_lands_on_the_link_that_dropped_and_no_other(db: String) {
    let Filled {
        dir,
        db,
        store,
        run,
    } = Filled::open(db).await;
    // Readers open the file read-only; the counters come through a writer.
    store.close().await;
    let at = |s: i64| BASE_NS as i64 + s * 1_000_000_000;
    let reading = |switch: &str, port, rx, tx| PortReading {
        switch: switch.into(),
        port,
        rx,
        tx,
    };
    let writer = Store::open(&db).await.unwrap();
    for (t, sent, got) in [(0, 0, 0), (1, 100, 90), (2, 250, 225)] {
        let round = [
            reading("s1", 2, 0, sent),
            reading("s2", 1, sent, 0),
            reading("s2", 2, 0, sent),
            reading("s3", 1, got, 0),
        ];
        writer
            .write_port_counters(run.id, at(t), &round)
            .await
            .unwrap();
    }
    writer.close().await;
    let store = Store::open_existing(&db).await.unwrap();
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
        values.iter().find(|v| v.link == l).map(|v| v.value)
    };
    assert_eq!(loss("s2", 2), Some(10.0), "{values:?}");
    assert_eq!(loss("s1", 2), Some(0.0), "{values:?}");
    // Path 2 (leftwards) lost probes, but no counter says where.
    assert_eq!(loss("s2", 1), None, "{values:?}");
    assert_eq!(values.len(), 2, "{values:?}");

    let out = dir.path().join("loss.png");
    let mut req = request(&db, out.clone(), HeatmapKind::Snapshot(ALL));
    req.metric = Metric::Loss;
    render(&req).await.unwrap();
    let m = Matrix::from_links(&run, &values);
    assert_eq!(m.cells[1][2], Cell::Value(10.0));
    assert_eq!(m.cells[2][1], Cell::NoData);
    let img = image::open(&out).unwrap().to_rgb8();
    let (grid, _) = intpath_plot::heatmap::Cells::layout(&m);
    assert_eq!(rgb_at(&img, grid.cell_center(2, 1)), [200, 200, 200]);
    assert_eq!(rgb_at(&img, grid.cell_center(1, 0)), [200, 200, 200]);
    let lossy = luminance(&img, grid.cell_center(1, 2));
    let clean = luminance(&img, grid.cell_center(0, 1));
    assert!(lossy + 50.0 < clean, "lossy {lossy} vs clean {clean}");
    store.close().await;
}

on_both_backends!(labels_units_and_outlines_are_explained);

/// A run over a topology file that labels its switches: the pictures name
/// each switch and link with its label, a framed cell is explained in the
/// legend, and only when there is one.
async fn labels_units_and_outlines_are_explained(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let db = labelled_db(db).await;
    let svg = |name: &str, kind| {
        let mut req = request(&db, dir.path().join(name), kind);
        req.metric = Metric::Qdelay;
        req
    };
    let culprit = DirLink {
        src: "s1".into(),
        src_port: 1,
        dst: "s2".into(),
        dst_port: 1,
    };
    let timeline = HeatmapKind::Timeline {
        range: ALL,
        hosts: false,
    };
    for (name, kind, row) in [
        ("snap.svg", HeatmapKind::Snapshot(ALL), "s1 Northport"),
        ("line.svg", timeline, "s1:1-&gt;s2 Northport-&gt;Eastfield"),
    ] {
        let plain = svg(name, kind);
        render(&plain).await.unwrap();
        let text = std::fs::read_to_string(&plain.out).unwrap();
        // The SVG writes each text on a line of its own.
        let has = |t: &str| text.contains(&format!(">\n{t}\n<"));
        assert!(has(row), "{name}: no {row}");
        assert!(text.contains("mean queueing delay (µs)"), "{name}");
        assert!(!has("culprit"), "{name}");
        render_outlined(&plain, std::slice::from_ref(&culprit))
            .await
            .unwrap();
        let text = std::fs::read_to_string(&plain.out).unwrap();
        assert!(
            text.contains(">\nculprit\n<"),
            "{name}: outline not in the legend"
        );
    }
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
        ignored_probes: 0,
        switches: switches
            .into_iter()
            .enumerate()
            .map(|(i, (n, _))| (n, i as u32))
            .collect(),
        links,
        labels: Default::default(),
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
    let grid = draw(&m, &scale, "FatTree k=8", &out, &[]).unwrap();
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
