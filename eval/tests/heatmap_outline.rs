//! The culprit heatmaps (`intpath diagnose culprits --heatmap DIR`): a
//! congested link found from synth output is outlined in the PNGs, and the
//! outline sits on that link's cell (snapshot) or row (timeline) and
//! nowhere else. Pixels are read back from the files.

mod common;

use common::{diagnose, generate};
use image::RgbImage;
use intpath_core::topo::Topology;
use intpath_diagnose::culprits::{blamed_links, Method};
use intpath_eval::synth::{self, App, Config};
use intpath_plot::heatmap::{
    draw, render_outlined, timeline, Grid, HeatmapKind, HeatmapRequest, Matrix, Scale,
};
use intpath_store::query::{self, Metric, RunInfo, Stat, TimeRange};
use intpath_store::Store;
use std::path::Path;

fn png(p: &Path) -> RgbImage {
    image::open(p).unwrap().to_rgb8()
}

/// Pixels inside `grid` that differ between the two pictures, as the
/// bounding box (x0, y0, x1, y1) in pixels.
fn changed_box(a: &RgbImage, b: &RgbImage, g: &Grid) -> Option<(i32, i32, i32, i32)> {
    assert_eq!(a.dimensions(), b.dimensions());
    let pad = 4;
    let (x_end, y_end) = (
        g.x0 + g.cols as i32 * g.cell_w + pad,
        g.y0 + g.rows as i32 * g.cell_h + pad,
    );
    let mut bbox: Option<(i32, i32, i32, i32)> = None;
    for y in (g.y0 - pad).max(0)..y_end.min(a.height() as i32) {
        for x in (g.x0 - pad).max(0)..x_end.min(a.width() as i32) {
            if a.get_pixel(x as u32, y as u32) != b.get_pixel(x as u32, y as u32) {
                let b = bbox.get_or_insert((x, y, x, y));
                *b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
            }
        }
    }
    bbox
}

/// The box spans cells `rows` × `cols` (half-open) of `g`, give or take
/// the outline's line width.
fn assert_on_cells(
    bbox: (i32, i32, i32, i32),
    g: &Grid,
    rows: (usize, usize),
    cols: (usize, usize),
) {
    let slack = 4;
    let want = (
        g.x0 + cols.0 as i32 * g.cell_w,
        g.y0 + rows.0 as i32 * g.cell_h,
        g.x0 + cols.1 as i32 * g.cell_w,
        g.y0 + rows.1 as i32 * g.cell_h,
    );
    for (got, want) in [
        (bbox.0, want.0),
        (bbox.1, want.1),
        (bbox.2, want.2),
        (bbox.3, want.3),
    ] {
        assert!(
            (got - want).abs() <= slack,
            "outline box {bbox:?}, cells {rows:?} × {cols:?} are at {want:?} in {g:?}"
        );
    }
}

#[test]
fn the_blamed_link_is_outlined_on_its_cell_and_row() {
    let dir = tempfile::tempdir().unwrap();
    let topo = Topology::load("fattree:k=4").unwrap();
    let cfg = Config {
        topo: topo.clone(),
        app: App::Hotel,
        world: intpath_eval::synth::World::default(),
        faults: vec!["link:auto:5".parse().unwrap()],
        seed: 11,
        requests: 1200,
        rate: 150.0,
        probe_rate: 50.0,
        out: dir.path().to_owned(),
    };
    let truth = generate(&cfg).unwrap();
    let db = dir.path().join("telemetry.db");
    let d = diagnose(synth::request(dir.path())).unwrap();
    let ranking = d.culprits(Method::Diagnose);
    let blamed = blamed_links(&ranking, &topo, 3);
    assert_eq!(
        blamed.first().map(|l| l.to_string()),
        Some(truth.faults[0].name.clone()),
        "{:?}",
        &ranking[..3.min(ranking.len())]
    );
    let culprit = &blamed[..1];

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let all = TimeRange {
        from: None,
        to: None,
    };
    let request = |name: &str, kind| HeatmapRequest {
        db: db.clone().into(),
        run: None,
        metric: Metric::Qdelay,
        stat: Stat::Mean,
        out: dir.path().join(name),
        kind,
    };
    let snap = request("snapshot.png", HeatmapKind::Snapshot(all));
    let links_over_time = HeatmapKind::Timeline {
        range: all,
        hosts: false,
    };
    let line = request("timeline.png", links_over_time);
    let plain_snap = request("plain-snapshot.png", HeatmapKind::Snapshot(all));
    let plain_line = request("plain-timeline.png", links_over_time);
    // The same pictures drawn directly, for their cell geometry.
    let (matrix, t_line, snap_scale, line_scale) = rt.block_on(async {
        for (req, outlined) in [
            (&snap, culprit),
            (&line, culprit),
            (&plain_snap, &[][..]),
            (&plain_line, &[][..]),
        ] {
            render_outlined(req, outlined).await.unwrap();
        }
        let store = Store::open_existing(&db).await.unwrap();
        let run = RunInfo::load(&store, None).await.unwrap();
        let w = run.window(None, None).unwrap();
        let values = query::link_values(&store, &run, Metric::Qdelay, Stat::Mean, w, false)
            .await
            .unwrap();
        let m = Matrix::from_links(&run, &values);
        let (t, tv) = timeline(&store, &run, Metric::Qdelay, Stat::Mean, all, false)
            .await
            .unwrap();
        store.close().await;
        let ss = Scale::fit(values.iter().map(|v| v.value), "q".into());
        let ls = Scale::fit(tv, "q".into());
        (m, t, ss, ls)
    });
    let geometry = dir.path().join("geometry.png");
    let g = draw(&matrix, &snap_scale, "geometry", &geometry, &[]).unwrap();
    let l = &culprit[0];
    let (r, c) = matrix.cell_of(&l.src, &l.dst).unwrap();
    let bbox = changed_box(&png(&snap.out), &png(&plain_snap.out), &g).expect("no outline drawn");
    assert_on_cells(bbox, &g, (r, r + 1), (c, c + 1));
    // The outline is dark where it crosses the cell's top edge.
    let (cx, _) = g.cell_center(r, c);
    let top = png(&snap.out);
    let edge = (g.y0 + r as i32 * g.cell_h - 2..=g.y0 + r as i32 * g.cell_h + 2)
        .map(|y| top.get_pixel(cx as u32, y as u32).0)
        .any(|p| p.iter().all(|&v| v < 60));
    assert!(edge, "no dark outline on the top edge of cell ({r}, {c})");

    let g = draw(&t_line, &line_scale, "geometry", &geometry, &[]).unwrap();
    let row = t_line
        .links
        .iter()
        .position(|x| *x == l.to_string())
        .unwrap();
    let bbox = changed_box(&png(&line.out), &png(&plain_line.out), &g).expect("no outline drawn");
    assert_on_cells(bbox, &g, (row, row + 1), (0, t_line.times.len()));
}
