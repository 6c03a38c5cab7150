//! Storing one batch: all of it in one transaction, or none of it.
//!
//! The multi-row statements are built by backend-generic code (plain
//! functions, [`Statement`]s out) and executed by each backend's arm: async
//! code generic over sqlx's executors trips the compiler's `Send` checks in a
//! spawned writer, statements built up front do not.

use crate::rows::{Batch, ProbeRow};
use crate::sql::{Dialect, POSTGRES, SQLITE};
use crate::{partitions, Pool, ProbeLoad, RunId, Store, StoreError};
use sqlx::postgres::PgConnection;
use sqlx::{Arguments as _, Connection as _, Database, Sqlite};
use std::fmt::Write as _;
use std::io::Write as _;

/// Most parameters one statement may hold (SQLite's default limit;
/// PostgreSQL's is 65,535).
const MAX_BINDS: usize = 32_766;

const PROBE_COLUMNS: &str = "run_id, path_id, seq, send_ns, recv_ns, e2e_ns, hops, ts0_us, records";

/// One statement and its parameters, ready to execute.
pub(crate) struct Statement<'q, DB: Database> {
    pub sql: String,
    pub args: DB::Arguments<'q>,
}

/// Executes `Statement`s on a connection or transaction, in order.
macro_rules! execute_all {
    ($conn:expr, $statements:expr) => {
        for s in $statements {
            sqlx::query_with(&s.sql, s.args)
                .execute(&mut *$conn)
                .await?;
        }
    };
}

impl Store {
    /// Writes one batch and the reject counts so far, all in one transaction.
    pub async fn write(
        &self,
        run: RunId,
        batch: &Batch,
        rejects: &[(&str, u64)],
    ) -> Result<(), StoreError> {
        let collector = match rejects.is_empty() {
            true => 0,
            false => self.collector_in(run).await?,
        };
        let rejects = Rejects {
            collector,
            counts: rejects,
        };
        match self.pool() {
            Pool::Sqlite(pool) => {
                let probes: Vec<&ProbeRow> = batch.probes.iter().collect();
                let mut statements = probe_inserts::<Sqlite>(run, &probes)?;
                statements.extend(aggregates(&SQLITE, run, None, batch, &rejects)?);
                let mut conn = pool.acquire().await?;
                let r: Result<(), StoreError> = async {
                    let mut tx = conn.begin().await?;
                    execute_all!(tx, statements);
                    tx.commit().await?;
                    Ok(())
                }
                .await;
                close_on_error(conn, r).await?;
            }
            Pool::Postgres(pool) => {
                let r = write_pg(
                    pool,
                    &self.partitions,
                    self.probe_load,
                    run,
                    batch,
                    &rejects,
                )
                .await;
                if r.is_err() {
                    // Another collector's retention may have dropped a
                    // partition we thought was there: look again next time.
                    self.partitions.forget();
                }
                r?;
            }
        }
        Ok(())
    }
}

/// Closes a SQLite connection whose write failed, and passes `r` on. After a
/// failed statement or COMMIT (a full disk) SQLite may have ended the
/// transaction itself; sqlx 0.8's ROLLBACK then fails and its transaction
/// depth stays up, so the next "commit" on that connection would only
/// release a savepoint of a transaction never committed, holding the
/// file's write lock until the process exits. Closing the connection rolls
/// back whatever it held and releases the lock: the next write starts on a
/// fresh one from what the file committed.
pub(crate) async fn close_on_error<T>(
    conn: sqlx::pool::PoolConnection<Sqlite>,
    r: Result<T, StoreError>,
) -> Result<T, StoreError> {
    if r.is_err() {
        let _ = conn.detach().close().await;
    }
    r
}

/// What one collector rejected in a run so far (its own counts: collectors
/// sharing a run each keep a row per reason, which `rejects` sums).
struct Rejects<'a, 'q> {
    collector: i64,
    counts: &'a [(&'q str, u64)],
}

async fn write_pg(
    pool: &sqlx::PgPool,
    known: &partitions::Known,
    load: ProbeLoad,
    run: RunId,
    batch: &Batch,
    rejects: &Rejects<'_, '_>,
) -> Result<(), StoreError> {
    let bucket_ns: i64 = sqlx::query_scalar("SELECT bucket_ns FROM runs WHERE id = $1")
        .bind(run)
        .fetch_one(pool)
        .await?;
    partitions::ensure(pool, known, batch, bucket_ns).await?;
    let statements = aggregates::<sqlx::Postgres>(&POSTGRES, run, Some(bucket_ns), batch, rejects)?;
    let mut tx = pool.begin().await?;
    let xid: String = sqlx::query_scalar("SELECT pg_current_xact_id()::text")
        .fetch_one(&mut *tx)
        .await?;
    match load {
        ProbeLoad::Copy => copy_probes(&mut tx, run, &batch.probes).await?,
        ProbeLoad::Insert => {
            let probes: Vec<&ProbeRow> = batch.probes.iter().collect();
            execute_all!(tx, probe_inserts::<sqlx::Postgres>(run, &probes)?);
        }
    }
    execute_all!(tx, statements);
    if let Err(e) = tx.commit().await {
        // A COMMIT whose answer was lost (the connection broke) may still
        // have committed: the server knows, and storing the batch again
        // would count it twice.
        let status: Option<String> = sqlx::query_scalar("SELECT pg_xact_status($1::xid8)")
            .bind(&xid)
            .fetch_one(pool)
            .await
            .unwrap_or(None);
        if status.as_deref() != Some("committed") {
            return Err(e.into());
        }
    }
    Ok(())
}

/// Multi-row INSERTs of `probes`.
fn probe_inserts<'q, DB: Database>(
    run: RunId,
    probes: &[&'q ProbeRow],
) -> Result<Vec<Statement<'q, DB>>, StoreError>
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    insert_rows(
        &format!("INSERT INTO probes ({PROBE_COLUMNS}) "),
        "",
        9,
        probes,
        |b, p| push_probe(b, run, p),
    )
}

fn push_probe<'q, DB: Database>(b: &mut Row<'_, 'q, DB>, run: RunId, p: &'q ProbeRow)
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    b.bind(run)
        .bind(i64::from(p.path_id))
        .bind(i64::from(p.sequence))
        .bind(p.send_ns)
        .bind(p.recv_ns)
        .bind(p.recv_ns.wrapping_sub(p.send_ns))
        .bind(i64::from(p.hops))
        .bind(p.ts0_us)
        .bind(p.records.as_str());
}

/// Probes by `COPY ... FROM STDIN` (text format): one stream per batch
/// instead of statements of at most 65,535 parameters (the `store_scaling`
/// bench sets it against multi-row INSERTs, [`ProbeLoad::Insert`]). The JSON in `records` holds
/// digits, signs, commas, brackets and `null` only, so it needs no escaping.
async fn copy_probes(
    c: &mut PgConnection,
    run: RunId,
    probes: &[ProbeRow],
) -> Result<(), StoreError> {
    if probes.is_empty() {
        return Ok(());
    }
    let mut copy = c
        .copy_in_raw(&format!("COPY probes ({PROBE_COLUMNS}) FROM STDIN"))
        .await?;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    for p in probes {
        // Writing into a Vec cannot fail.
        let _ = writeln!(
            buf,
            "{run}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            p.path_id,
            p.sequence,
            p.send_ns,
            p.recv_ns,
            p.recv_ns.wrapping_sub(p.send_ns),
            p.hops,
            p.ts0_us,
            p.records
        );
        if buf.len() >= 1 << 20 {
            copy.send(buf.as_slice()).await?;
            buf.clear();
        }
    }
    copy.send(buf).await?;
    copy.finish().await?;
    Ok(())
}

/// The bucket upserts, path totals and reject counts, in key order: two
/// collectors merging into the same buckets then lock rows in the same order
/// and cannot deadlock. `bucket_ns` is given where the bucket tables carry
/// their start time (PostgreSQL's partition key).
fn aggregates<'q, DB: Database>(
    d: &Dialect,
    run: RunId,
    bucket_ns: Option<i64>,
    batch: &'q Batch,
    rejects: &Rejects<'_, 'q>,
) -> Result<Vec<Statement<'q, DB>>, StoreError>
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut out = Vec::new();
    if let Some(first) = batch.first_ns {
        let mut args = DB::Arguments::default();
        args.add(first).map_err(sqlx::Error::Encode)?;
        args.add(run).map_err(sqlx::Error::Encode)?;
        out.push(Statement {
            sql: d.first_ns.to_owned(),
            args,
        });
    }
    let (t_col, extra) = match d.bucket_start {
        true => (", t_ns", 1),
        false => ("", 0),
    };
    let start = |bucket: i64| bucket.wrapping_mul(bucket_ns.unwrap_or(0));
    let mut links: Vec<_> = batch.links.iter().collect();
    links.sort_unstable_by_key(|(k, _)| **k);
    out.extend(insert_rows(
        &format!(
            "INSERT INTO link_buckets AS b (run_id, link_id, bucket{t_col}, samples, qdepth_min, \
             qdepth_sum, qdepth_max, qdelay_min, qdelay_sum, qdelay_max) "
        ),
        d.link_buckets,
        10 + extra,
        &links,
        |b, ((link, bucket), a)| {
            b.bind(run).bind(i64::from(*link)).bind(*bucket);
            if d.bucket_start {
                b.bind(start(*bucket));
            }
            b.bind(a.samples as i64)
                .bind(i64::from(a.qdepth_min))
                .bind(a.qdepth_sum as i64)
                .bind(i64::from(a.qdepth_max))
                .bind(i64::from(a.qdelay_min))
                .bind(a.qdelay_sum as i64)
                .bind(i64::from(a.qdelay_max));
        },
    )?);
    let mut paths: Vec<_> = batch.paths.iter().collect();
    paths.sort_unstable_by_key(|(k, _)| **k);
    out.extend(insert_rows(
        &format!(
            "INSERT INTO path_buckets AS b (run_id, path_id, bucket{t_col}, probes, lost, \
             duplicates, reordered, e2e_sum_ns, e2e_max_ns) "
        ),
        d.path_buckets,
        9 + extra,
        &paths,
        |b, ((path, bucket), a)| {
            b.bind(run).bind(i64::from(*path)).bind(*bucket);
            if d.bucket_start {
                b.bind(start(*bucket));
            }
            b.bind(a.probes as i64)
                .bind(a.lost)
                .bind(a.duplicates as i64)
                .bind(a.reordered as i64)
                .bind(a.e2e_sum_ns)
                .bind(a.e2e_max_ns);
        },
    )?);
    let mut stats: Vec<_> = batch.path_stats.iter().collect();
    stats.sort_unstable_by_key(|(p, _)| **p);
    out.extend(insert_rows(
        "INSERT INTO path_stats (run_id, path_id, first_seq, last_seq, received, \
         duplicates, reordered, lost, restarts) ",
        "ON CONFLICT (run_id, path_id) DO UPDATE SET first_seq = excluded.first_seq, \
         last_seq = excluded.last_seq, received = excluded.received, \
         duplicates = excluded.duplicates, reordered = excluded.reordered, \
         lost = excluded.lost, restarts = excluded.restarts",
        9,
        &stats,
        |b, (path, s)| {
            b.bind(run)
                .bind(i64::from(*path))
                .bind(i64::from(s.first_seq))
                .bind(i64::from(s.last_seq))
                .bind(s.received as i64)
                .bind(s.duplicates as i64)
                .bind(s.reordered as i64)
                .bind(s.lost as i64)
                .bind(s.restarts as i64);
        },
    )?);
    let mut counts = rejects.counts.to_vec();
    counts.sort_unstable();
    out.extend(insert_rows(
        "INSERT INTO collector_rejects (run_id, collector_id, reason, count) ",
        "ON CONFLICT (run_id, collector_id, reason) DO UPDATE SET count = excluded.count",
        4,
        &counts,
        |b, (reason, n)| {
            b.bind(run)
                .bind(rejects.collector)
                .bind(reason)
                .bind(n as i64);
        },
    )?);
    Ok(out)
}

/// The values of one row of a multi-row INSERT.
pub(crate) struct Row<'r, 'q, DB: Database> {
    args: &'r mut DB::Arguments<'q>,
    error: &'r mut Option<sqlx::error::BoxDynError>,
}

impl<'q, DB: Database> Row<'_, 'q, DB> {
    pub(crate) fn bind<T: 'q + sqlx::Encode<'q, DB> + sqlx::Type<DB>>(
        &mut self,
        v: T,
    ) -> &mut Self {
        if let Err(e) = self.args.add(v) {
            self.error.get_or_insert(e);
        }
        self
    }
}

/// `head` + `VALUES ($1, ...), (...)` + ` tail`, as many rows per statement
/// as the bind limit allows (`cols` binds per row).
///
/// PostgreSQL gets `$n` parameters, SQLite anonymous `?`: sqlx-sqlite asks
/// SQLite for every parameter's name, which SQLite finds by walking the
/// list of the statement's named parameters, so numbered ones made each
/// 32,766-parameter statement quadratic (the store fell from about 1 M to
/// 0.12 M hop records/s, 79 % of its time in `sqlite3_bind_parameter_name`).
pub(crate) fn insert_rows<'q, DB: Database, X: Copy>(
    head: &str,
    tail: &str,
    cols: usize,
    items: &[X],
    mut row: impl FnMut(&mut Row<'_, 'q, DB>, X),
) -> Result<Vec<Statement<'q, DB>>, StoreError> {
    let anonymous = DB::NAME == <Sqlite as Database>::NAME;
    let mut out = Vec::new();
    for chunk in items.chunks(MAX_BINDS / cols) {
        let mut sql = String::with_capacity(head.len() + tail.len() + chunk.len() * cols * 8);
        sql.push_str(head);
        sql.push_str("VALUES ");
        let mut n = 0;
        for i in 0..chunk.len() {
            sql.push_str(if i == 0 { "(" } else { ", (" });
            for j in 0..cols {
                n += 1;
                sql.push_str(if j == 0 { "" } else { ", " });
                match anonymous {
                    true => sql.push('?'),
                    false => {
                        let _ = write!(sql, "${n}");
                    }
                }
            }
            sql.push(')');
        }
        sql.push(' ');
        sql.push_str(tail);
        let mut args = DB::Arguments::default();
        args.reserve(n, 0);
        let mut error = None;
        for &item in chunk {
            row(
                &mut Row {
                    args: &mut args,
                    error: &mut error,
                },
                item,
            );
        }
        if let Some(e) = error {
            return Err(sqlx::Error::Encode(e).into());
        }
        out.push(Statement { sql, args });
    }
    Ok(out)
}
