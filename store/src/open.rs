//! Opening a SQLite file safely: readers never change it (nor need a
//! writable directory when it has no unmerged WAL), a damaged file is caught
//! on open, and another application's database is not given our schema.

use crate::{Db, StoreError};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::SqlitePool;
use std::path::Path;
use std::time::Duration;

/// Opens `path` read-only (`mode=ro`: no pragma that writes, no schema
/// change). Where that fails, typically because the directory is not
/// writable for the WAL index, an `immutable=1` open reads the file as it
/// is, which is right only when no WAL holds changes not yet merged into it.
pub(super) async fn reader(db: &Db, path: &Path) -> Result<SqlitePool, StoreError> {
    let opts = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .busy_timeout(Duration::from_secs(10));
    let open = |opts: SqliteConnectOptions| async move {
        let pool = SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(opts)
            .await?;
        sqlx::query("SELECT count(*) FROM sqlite_master")
            .execute(&pool)
            .await?;
        Ok::<_, sqlx::Error>(pool)
    };
    let pool = match open(opts.clone()).await {
        Ok(pool) => pool,
        Err(source) if is_not_a_database(&source) => return Err(damaged(db, &source)),
        Err(source) => {
            let wal = path.with_file_name(format!(
                "{}-wal",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
            if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                return Err(StoreError::UnmergedWal {
                    db: db.clone(),
                    source,
                });
            }
            open(opts.immutable(true))
                .await
                .map_err(|source| StoreError::Open {
                    db: db.clone(),
                    source,
                })?
        }
    };
    check(db, path, &pool).await?;
    Ok(pool)
}

/// Files up to this size get a whole `quick_check` on open.
const FULL_CHECK_MAX: u64 = 256 << 20;

/// `PRAGMA quick_check`: every page, record and index entry is well-formed
/// (not that indexes match their tables; that is `integrity_check`, several
/// times slower). It reads the whole file: 0.5 s for 107 MB from the page
/// cache (BENCHMARKS.md). Above [`FULL_CHECK_MAX`] the raw `probes` rows
/// are left out, so opening stays quick however long the history; the
/// tables queries and heatmaps read (runs, links, buckets) are all checked.
async fn check(db: &Db, path: &Path, pool: &SqlitePool) -> Result<(), StoreError> {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let pragmas = match size <= FULL_CHECK_MAX {
        true => vec!["PRAGMA quick_check(3)".to_owned()],
        false => {
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'probes'",
            )
            .fetch_all(pool)
            .await
            .map_err(|e| from_sql(db, e))?;
            let quoted = tables.iter().map(|t| t.replace('"', "\"\""));
            quoted
                .map(|t| format!("PRAGMA quick_check(\"{t}\")"))
                .collect()
        }
    };
    for pragma in pragmas {
        let found: Vec<String> = sqlx::query_scalar(&pragma)
            .fetch_all(pool)
            .await
            .map_err(|e| from_sql(db, e))?;
        if found.first().is_none_or(|ok| ok != "ok") {
            return Err(StoreError::Damaged {
                db: db.clone(),
                detail: one_line(&found.join("\n")),
            });
        }
    }
    Ok(())
}

fn from_sql(db: &Db, e: sqlx::Error) -> StoreError {
    match is_not_a_database(&e) {
        true => damaged(db, &e),
        false => e.into(),
    }
}

/// The first two problems SQLite names, on one line.
fn one_line(problems: &str) -> String {
    let lines = problems.lines().map(str::trim);
    let real = lines.filter(|l| !l.is_empty() && !l.starts_with("***"));
    real.take(2).collect::<Vec<_>>().join("; ")
}

fn is_not_a_database(e: &sqlx::Error) -> bool {
    // SQLITE_CORRUPT (11) and SQLITE_NOTADB (26).
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == "11" || c == "26")
}

fn damaged(db: &Db, e: &sqlx::Error) -> StoreError {
    StoreError::Damaged {
        db: db.clone(),
        detail: one_line(
            &e.as_database_error()
                .map_or_else(|| e.to_string(), |d| d.message().to_owned()),
        ),
    }
}

/// Refuses a file that holds tables but not our migrations: another
/// application's database, which must not silently get our schema (nor be
/// switched to WAL). Looked at read-only, before the writer's connection
/// changes anything. A missing or empty file is ours to set up.
pub(super) async fn ensure_ours(db: &Db, path: &Path) -> Result<(), StoreError> {
    if !std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
        return Ok(());
    }
    let pool = reader(db, path).await?;
    let r = ours(db, &pool).await;
    pool.close().await;
    r
}

async fn ours(db: &Db, pool: &SqlitePool) -> Result<(), StoreError> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .fetch_all(pool)
    .await
    .map_err(|e| from_sql(db, e))?;
    if tables.is_empty() || tables.iter().any(|t| t == "_sqlx_migrations") {
        return Ok(());
    }
    Err(StoreError::Foreign {
        db: db.clone(),
        tables: tables.len(),
    })
}
