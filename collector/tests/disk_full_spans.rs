//! The OTLP receiver on a filesystem that fills up and frees again (a
//! small tmpfs; root only), alone and beside probe capture in one
//! `collect`: every span answered 200 is in the database, a refused write
//! keeps no lock and is answered 503 until a write succeeds again, the
//! summary counts the rows it wrote, and refused spans never re-sent are
//! reported as lost with a non-zero exit.

mod common;

use common::disk::*;
use common::otlp::{hex, numbered, PROTO};
use intpath_test_support::otlp::{post, wait_for_listener};
use prost::Message;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// Spans per export request.
const SPANS: u32 = 100;

/// An exporter that remembers which of its requests were acknowledged and
/// which refused (503).
struct Exporter {
    client: reqwest::Client,
    addr: String,
    acked: Vec<u32>,
    refused: Vec<u32>,
}

impl Exporter {
    fn new(addr: &str) -> Self {
        Self {
            client: reqwest::Client::new(),
            addr: addr.into(),
            acked: Vec::new(),
            refused: Vec::new(),
        }
    }

    /// Sends request `n`; its status.
    async fn export(&mut self, n: u32) -> u16 {
        let body = numbered(7, n, SPANS).encode_to_vec();
        let a = post(&self.client, &self.addr, PROTO, None, body)
            .await
            .unwrap();
        match a.status {
            200 => self.acked.push(n),
            503 => self.refused.push(n),
            s => panic!(
                "request {n} answered {s}: {}",
                String::from_utf8_lossy(&a.body)
            ),
        }
        a.status
    }

    /// Re-sends what was refused (all but `keep_back` of the last), as an
    /// exporter retrying does; every one must now be acknowledged.
    async fn retry(&mut self, keep_back: usize) {
        let refused = std::mem::take(&mut self.refused);
        let n = refused.len().saturating_sub(keep_back);
        for &r in &refused[..n] {
            assert_eq!(self.export(r).await, 200, "retry of request {r}");
        }
        self.refused = refused[n..].to_vec();
    }
}

/// The (trace, span) ids of requests `ns`.
fn ids(ns: &[u32]) -> HashSet<(String, String)> {
    ns.iter()
        .flat_map(|&n| {
            numbered(7, n, SPANS).resource_spans[0].scope_spans[0]
                .spans
                .clone()
        })
        .map(|s| (hex(&s.trace_id), hex(&s.span_id)))
        .collect()
}

/// The (trace, span) ids and the number of span rows in `db`.
fn stored_ids(db: &Path) -> (HashSet<(String, String)>, u64) {
    let (_copy, path) = copy_db(db);
    let c = rusqlite::Connection::open(path).unwrap();
    let mut q = c.prepare("SELECT trace_id, span_id FROM spans").unwrap();
    let ids: Vec<(String, String)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let rows = ids.len() as u64;
    (ids.into_iter().collect(), rows)
}

/// Whether another process can take the file's write lock: a writer whose
/// write failed must not keep it.
fn write_lock_is_free(db: &Path) -> Result<(), rusqlite::Error> {
    let c = rusqlite::Connection::open(db)?;
    c.busy_timeout(Duration::from_millis(100))?;
    c.execute_batch("BEGIN IMMEDIATE; ROLLBACK")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs root"]
async fn spans_on_a_full_disk_are_refused_until_space_returns_and_none_acknowledged_is_lost() {
    let fs = Tmpfs::mount(TMPFS);
    let db = fs.mnt.join("t.db");
    let addr = intpath_test_support::free_addr();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_intpath-collector"))
        .args(["receive", "--db"])
        .arg(&db)
        .args(["--otlp-listen", &addr])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for_listener(&addr, Duration::from_secs(20)));
    // Whatever answered the poll, the receiver must be the one listening.
    if let Some(status) = child.try_wait().unwrap() {
        let out = child.wait_with_output().unwrap();
        panic!(
            "the receiver exited ({status}): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut ex = Exporter::new(&addr);
    for n in 0..20 {
        assert_eq!(
            ex.export(n).await,
            200,
            "request {n} before the disk filled"
        );
    }
    let ballast = fill(&fs.mnt, 0);
    for n in 20..60 {
        ex.export(n).await;
    }
    assert!(
        ex.refused.len() >= 30,
        "the full disk refused only {:?}",
        ex.refused
    );
    let refused_at_first = ex.refused.len() as u64;
    write_lock_is_free(&db).expect("the failed writes left the file locked");
    std::fs::remove_file(ballast).unwrap();
    // Space is back: new requests and the retries are stored, but for the
    // last refused request, which is never re-sent.
    for n in 60..70 {
        assert_eq!(ex.export(n).await, 200, "request {n} after space returned");
    }
    ex.retry(1).await;
    let never = ex.refused.clone();
    let (ok, summary, out) = terminate(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("summary: {summary}");

    let (stored, rows) = stored_ids(&db);
    let acked = ids(&ex.acked);
    let missing = acked.difference(&stored).count();
    assert_eq!(missing, 0, "{missing} acknowledged spans are not stored");
    assert!(ids(&never).is_disjoint(&stored));
    assert_eq!(field(&summary, "spans_stored"), rows, "{summary}");
    assert_eq!(rows, acked.len() as u64, "{summary}");
    assert_eq!(
        summary["requests"]["unavailable"].as_u64(),
        Some(refused_at_first),
        "{summary}"
    );
    assert_eq!(
        field(&summary, "spans_refused"),
        refused_at_first * u64::from(SPANS),
        "{summary}"
    );
    // The one request never re-sent is lost, and said so.
    assert_eq!(field(&summary, "spans_lost"), u64::from(SPANS), "{summary}");
    assert!(!ok, "exit 0 although spans were lost: {summary}");
    let err = stderr.lines().last().unwrap_or_default();
    assert!(
        err.starts_with("intpath-collector: error: 100 spans were lost") && err.contains("full"),
        "{err}"
    );
}

#[test]
#[ignore = "needs root"]
fn probes_and_spans_on_one_full_disk_neither_block_the_other_and_both_recover() {
    let otlp = intpath_test_support::free_addr();
    let Run {
        fs,
        dir,
        db,
        plan,
        child,
        addr,
    } = Run::start(&["--otlp-listen", &otlp]);
    assert!(wait_for_listener(&otlp, Duration::from_secs(20)));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut ex = Exporter::new(&otlp);
    send_probes(&plan, &addr, 0..2_000);
    rt.block_on(async {
        for n in 0..10 {
            assert_eq!(
                ex.export(n).await,
                200,
                "request {n} before the disk filled"
            );
        }
    });
    let ballast = fill(&fs.mnt, 0);
    send_probes(&plan, &addr, 2_000..6_000);
    rt.block_on(async {
        for n in 10..30 {
            ex.export(n).await;
        }
    });
    assert!(!ex.refused.is_empty(), "the full disk refused no spans");
    let refused = ex.refused.len() as u64;
    std::thread::sleep(Duration::from_millis(500));
    std::fs::remove_file(ballast).unwrap();
    rt.block_on(async {
        for n in 30..40 {
            assert_eq!(ex.export(n).await, 200, "request {n} after space returned");
        }
        ex.retry(0).await;
    });
    send_probes(&plan, &addr, 6_000..8_000);
    let (ok, summary, log) = stop(child, dir.path());
    eprintln!("summary: {summary}");
    assert!(
        !log.contains("database is locked"),
        "one writer locked the other out:\n{log}"
    );
    assert!(ok, "{summary}\n{log}");

    let (probes, distinct, bucketed) = rows(&db);
    assert!(
        field(&summary, "store_outages") > 0,
        "the disk never filled for probes: {summary}"
    );
    assert_eq!(field(&summary, "lost_probes"), 0, "{summary}");
    assert_eq!(field(&summary, "probes"), probes, "{summary}");
    assert_eq!((distinct, bucketed), (probes, probes), "{summary}");
    assert_eq!(probes + field(&summary, "udp_drops"), 8_000, "{summary}");

    let spans = &summary["spans"];
    let (stored, rows) = stored_ids(&db);
    let acked = ids(&ex.acked);
    let missing = acked.difference(&stored).count();
    assert_eq!(missing, 0, "{missing} acknowledged spans are not stored");
    assert_eq!(rows, acked.len() as u64, "{summary}");
    assert_eq!(field(spans, "spans_stored"), rows, "{summary}");
    assert_eq!(spans["requests"]["unavailable"].as_u64(), Some(refused));
    assert_eq!(field(spans, "spans_lost"), 0, "{summary}");
}
