//! The page in a real browser (Debian's chromium, headless, over the
//! DevTools protocol): it loads with no console error, its heatmap shows a
//! run's congested link as the hottest row, it updates while the
//! collector's real pipeline writes, and it shows a diagnosis with the
//! requests its culprit slowed. A screenshot of each is kept (with
//! `INTPATH_SCREENSHOTS=DIR`, in DIR: docs/img/ holds the README's).

mod common;

use common::browser::Browser;
use common::{synth_with_spans, Served, Writer};
use std::path::PathBuf;
use std::time::Duration;

fn screenshot_path(name: &str, tmp: &std::path::Path) -> PathBuf {
    match std::env::var_os("INTPATH_SCREENSHOTS") {
        Some(dir) => PathBuf::from(dir).join(name),
        None => tmp.join(name),
    }
}

/// Every heatmap row's link and mean, as the page shows them.
const ROWS: &str = "JSON.stringify([...document.querySelectorAll('#heatmap .hm-row')]\
    .map(r => [r.dataset.link, r.dataset.mean === '' ? null : Number(r.dataset.mean)]))";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_the_congested_link_hottest_and_follows_the_collector() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("telemetry.db");
    // The server starts before the database exists, as with `demo --web`.
    let served = Served::start(&db).await;
    let b = Browser::start(1400, 1300).await;
    b.open(&served.url).await;
    b.wait_for(
        "document.getElementById('live').textContent.startsWith('waiting')",
        Duration::from_secs(10),
    )
    .await;

    let w = Writer::start(&db, 400).await;
    w.write(0..200).await;
    let hottest = b
        .wait_for(
            "document.getElementById('heatmap').dataset.hottest",
            Duration::from_secs(20),
        )
        .await;
    assert_eq!(hottest, "s2:2->s3");
    // The rows the page drew: every link of the run, the congested one
    // with the highest mean.
    let rows: Vec<(String, Option<f64>)> =
        serde_json::from_str(b.eval(ROWS).await.as_str().unwrap()).unwrap();
    // Every link of the run a row, but the two from the collector hosts,
    // which no probe crosses: those are named in a line below.
    assert_eq!(rows.len(), 8, "{rows:?}");
    let idle = b
        .eval("document.querySelector('#heatmap-panel .idle').textContent")
        .await;
    assert_eq!(idle, "no probe crossed 2 links: c1:0->s1 c4:0->s4");
    let (top, mean) = rows
        .iter()
        .filter_map(|(l, m)| m.map(|m| (l, m)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!((top.as_str(), mean > 10.0), ("s2:2->s3", true), "{rows:?}");
    // The topology and its two probe paths, and the snapshot's cells.
    b.wait_for(
        "document.querySelectorAll('#topology .path-line').length === 2",
        Duration::from_secs(10),
    )
    .await;
    b.wait_for(
        "document.querySelectorAll('#snapshot rect[data-link]').length === 6",
        Duration::from_secs(10),
    )
    .await;
    let end: f64 = b
        .eval("Number(document.getElementById('heatmap').dataset.end)")
        .await
        .as_f64()
        .unwrap();
    assert!((1.9..2.2).contains(&end), "{end}");

    // More probes arrive: the page follows without a reload.
    w.write(200..400).await;
    let later = b
        .wait_for(
            "Number(document.getElementById('heatmap').dataset.end) > 3.5 \
             && Number(document.getElementById('heatmap').dataset.end)",
            Duration::from_secs(20),
        )
        .await;
    assert!(later.as_f64().unwrap() < 4.2, "{later}");
    assert!(
        b.eval("document.body.dataset.updates")
            .await
            .as_str()
            .unwrap()
            .parse::<u32>()
            .unwrap()
            >= 2
    );
    assert_eq!(
        b.eval("document.getElementById('heatmap').dataset.hottest")
            .await,
        "s2:2->s3"
    );
    // A click on the row opens the link's detail: three charts.
    b.eval("document.querySelector('.hm-row[data-link=\"s2:2->s3\"]').click()")
        .await;
    b.wait_for(
        "document.getElementById('detail').dataset.link === 's2:2->s3' \
         && document.querySelectorAll('#detail svg').length === 3",
        Duration::from_secs(10),
    )
    .await;
    // No spans in this database: the diagnosis says so, in the page.
    let why = b
        .wait_for(
            "document.getElementById('diagnosis').dataset.available === 'false' \
             && document.getElementById('diagnosis').textContent",
            Duration::from_secs(60),
        )
        .await;
    assert!(why.as_str().unwrap().contains("no spans"), "{why}");
    assert_eq!(w.finish().await, 800);
    b.screenshot(&screenshot_path("web-live.png", dir.path()))
        .await;

    assert_eq!(b.errors(), Vec::<String>::new());
    assert_eq!(b.eval("document.body.dataset.errors || ''").await, "");
    drop(b);
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_the_culprit_and_the_requests_it_slowed() {
    let dir = tempfile::tempdir().unwrap();
    let truth = synth_with_spans(dir.path(), "link:auto:5", 500).await;
    let fault = &truth.faults[0];
    let served = Served::start(dir.path().join("telemetry.db")).await;
    let b = Browser::start(1400, 1900).await;
    b.open(&served.url).await;
    // The diagnosis of a debug build takes a while.
    let first = b
        .wait_for(
            "document.querySelector('#culprits tr[data-name]')?.dataset.name",
            Duration::from_secs(240),
        )
        .await;
    assert_eq!(first, fault.name.as_str());
    let requests = b
        .wait_for(
            "document.querySelectorAll('#traces tr.trace').length",
            Duration::from_secs(10),
        )
        .await;
    assert!(requests.as_u64().unwrap() > 0);
    // Each listed request has a call that crossed the culprit link.
    let crossed = b
        .eval(
            "[...document.querySelectorAll('#traces tr.trace')].every(r => \
             [...r.querySelectorAll('span[title]')].some(s => s.title.includes(document.getElementById('traces').dataset.culprit)))",
        )
        .await;
    assert_eq!(crossed, true);
    b.wait_for(
        "document.getElementById('heatmap').dataset.hottest",
        Duration::from_secs(20),
    )
    .await;
    b.wait_for(
        "document.querySelectorAll('#topology .cable').length === 48",
        Duration::from_secs(10),
    )
    .await;
    // A click on the culprit opens its link's detail.
    b.eval("document.querySelector('#culprits tr[data-name]').click()")
        .await;
    b.wait_for(
        &format!(
            "document.getElementById('detail').dataset.link === '{}' \
             && document.querySelectorAll('#detail svg').length === 3",
            fault.name
        ),
        Duration::from_secs(10),
    )
    .await;
    b.screenshot(&screenshot_path("web-diagnosis.png", dir.path()))
        .await;
    assert_eq!(b.errors(), Vec::<String>::new());
    drop(b);
    served.stop().await;
}
