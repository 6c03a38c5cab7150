//! The collector on a filesystem that fills up (a small tmpfs, filled
//! once the collector runs; root only):
//! every probe it reports as stored is in the database, every other one is
//! reported as lost with a non-zero exit, and batches held while the disk
//! was full reach the file once space comes back.

mod common;

use common::disk::*;
use std::time::Duration;

#[test]
#[ignore = "needs root"]
fn a_disk_that_fills_loses_nothing_acknowledged_and_reports_the_rest() {
    let Run {
        fs,
        dir,
        db,
        plan,
        child,
        addr,
    } = Run::start(&[]);
    // Room for a few batches, then the disk is full for good.
    let _ballast = fill(&fs.mnt, 512 << 10);
    let sent = 20_000;
    send_probes(&plan, &addr, 0..sent);
    let (ok, summary, stderr) = stop(child, dir.path());
    eprintln!("summary: {summary}");
    let (probes, distinct, bucketed) = rows(&db);
    assert!(!ok, "exit 0 although the disk filled: {summary} {stderr}");
    let err = stderr.lines().last().unwrap_or_default();
    assert!(
        err.starts_with("intpath-collector: error: ")
            && err.contains("lost")
            && err.contains("full"),
        "{err}"
    );
    let lost = field(&summary, "lost_probes");
    assert!(lost > 0, "{summary}");
    assert!(probes > 0, "the disk was full before the run: {summary}");
    assert!(
        err.contains(&lost.to_string()),
        "the error names another count: {err} {summary}"
    );
    assert_eq!(field(&summary, "probes"), probes, "{summary}");
    assert_eq!((distinct, bucketed), (probes, probes), "{summary}");
    assert_eq!(
        probes + lost + field(&summary, "udp_drops"),
        u64::from(sent),
        "{summary}"
    );
}

#[test]
#[ignore = "needs root"]
fn batches_held_while_the_disk_is_full_reach_the_file_when_space_returns() {
    let Run {
        fs,
        dir,
        db,
        plan,
        child,
        addr,
    } = Run::start(&[]);
    let ballast = fill(&fs.mnt, 96 << 10);
    send_probes(&plan, &addr, 0..20_000);
    std::thread::sleep(Duration::from_secs(1));
    std::fs::remove_file(ballast).unwrap();
    send_probes(&plan, &addr, 20_000..22_000);
    let (ok, summary, stderr) = stop(child, dir.path());
    eprintln!("summary: {summary}");
    assert!(
        field(&summary, "store_outages") > 0,
        "the disk never filled: {summary}"
    );
    assert!(ok, "{summary} {stderr}");
    let (probes, distinct, bucketed) = rows(&db);
    assert_eq!(field(&summary, "lost_probes"), 0, "{summary}");
    assert_eq!(field(&summary, "probes"), probes, "{summary}");
    assert_eq!((distinct, bucketed), (probes, probes), "{summary}");
    assert_eq!(probes + field(&summary, "udp_drops"), 22_000, "{summary}");
}
