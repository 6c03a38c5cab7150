//! Telemetry files as users hand them over: in a read-only place, in
//! rollback-journal mode, damaged, or another application's database.

use intpath_store::{query, Store, StoreError};
use intpath_test_support::telemetry::{collect_frames, lossy_frames};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A closed telemetry database of 391 probes in `dir`.
async fn telemetry(dir: &Path) -> PathBuf {
    let db = dir.join("t.db");
    collect_frames(&db, &lossy_frames()).await;
    assert!(!dir.join("t.db-wal").exists(), "the WAL was not merged");
    db
}

async fn probes_in(db: &Path) -> Result<i64, StoreError> {
    let store = Store::open_existing(db).await?;
    let runs = query::runs(&store).await.unwrap();
    store.close().await;
    Ok(runs[0].probes)
}

#[tokio::test]
async fn reading_changes_nothing_and_needs_no_wal() {
    let dir = tempfile::tempdir().unwrap();
    let db = telemetry(dir.path()).await;
    let c = rusqlite::Connection::open(&db).unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    drop(c);
    let before = std::fs::read(&db).unwrap();
    assert_eq!(probes_in(&db).await.unwrap(), 391);
    assert!(!dir.path().join("t.db-wal").exists());
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "reading changed the file"
    );
}

#[tokio::test]
async fn a_damaged_file_is_refused_on_open_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = telemetry(dir.path()).await;
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 16_384;
    assert!(bytes.len() > 4 * page, "{}", bytes.len());
    // Flip bits in the middle of every page after the schema's.
    for p in 1..bytes.len() / page {
        for b in &mut bytes[p * page..p * page + 64] {
            *b ^= 0x5a;
        }
    }
    std::fs::write(&db, bytes).unwrap();
    let e = probes_in(&db).await.unwrap_err().to_string();
    assert!(
        e.contains("damaged") && e.contains("t.db") && !e.contains('\n'),
        "{e}"
    );
}

#[tokio::test]
async fn another_applications_database_gets_no_schema() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        .unwrap();
    drop(c);
    let before = std::fs::read(&db).unwrap();
    let e = Store::open(&db).await.unwrap_err().to_string();
    assert!(
        e.contains("another application") && !e.contains('\n'),
        "{e}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    // An empty file is a new database.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    Store::open(&empty).await.unwrap().close().await;
    // Ours, opened again, is still ours.
    let ours = telemetry(dir.path()).await;
    Store::open(&ours).await.unwrap().close().await;
}

/// `dir` remounted read-only for as long as it lives.
struct ReadOnly(PathBuf);

impl ReadOnly {
    fn mount(dir: &Path) -> Self {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        Self(dir.to_owned())
    }

    fn freeze(&self) {
        let out = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).output();
    }
}

#[tokio::test]
#[ignore = "needs root"]
async fn a_database_on_a_read_only_filesystem_can_be_queried() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("mnt");
    std::fs::create_dir(&dir).unwrap();
    let fs = ReadOnly::mount(&dir);
    let db = telemetry(&dir).await;
    // A second file whose WAL still holds a committed change (made
    // elsewhere: a file open for writing keeps a remount from going
    // read-only).
    let elsewhere = tempfile::tempdir().unwrap();
    let work = elsewhere.path().join("pending.db");
    std::fs::copy(&db, &work).unwrap();
    let c = rusqlite::Connection::open(&work).unwrap();
    c.execute_batch("PRAGMA wal_autocheckpoint = 0; DELETE FROM probes WHERE seq < 10;")
        .unwrap();
    let pending = dir.join("pending.db");
    std::fs::copy(&work, &pending).unwrap();
    std::fs::copy(
        elsewhere.path().join("pending.db-wal"),
        dir.join("pending.db-wal"),
    )
    .unwrap();
    drop(c);
    fs.freeze();
    assert_eq!(probes_in(&db).await.unwrap(), 391);
    let e = probes_in(&pending).await.unwrap_err().to_string();
    assert!(e.contains("WAL") && !e.contains('\n'), "{e}");
}
