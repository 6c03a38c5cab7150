//! Switch port counters read during a run: where loss happens, link by
//! link. A probe lost on a path was lost on one of its links, but which
//! one the probes cannot say; the sender's egress counter against the
//! receiver's ingress counter can.

use crate::query::{LinkValue, QueryError, RunInfo, Window};
use crate::{on_pool, RunId, Store, StoreError};
use std::collections::HashMap;

/// One port's cumulative packet counters at one reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortReading {
    pub switch: String,
    pub port: u16,
    /// Packets received on the port.
    pub rx: i64,
    /// Packets sent by the port.
    pub tx: i64,
}

impl Store {
    /// Stores one round of readings of run `run`, all taken at `t_ns`
    /// (wall-clock ns, as probe send times).
    pub async fn write_port_counters(
        &self,
        run: RunId,
        t_ns: i64,
        readings: &[PortReading],
    ) -> Result<(), StoreError> {
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            for r in readings {
                sqlx::query(
                    "INSERT INTO port_counters (run_id, switch, port, t_ns, rx, tx) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(run)
                .bind(&r.switch)
                .bind(i32::from(r.port))
                .bind(t_ns)
                .bind(r.rx)
                .bind(r.tx)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }
}

/// One port's reading: time (ns), packets received, packets sent.
type Reading = (i64, i64, i64);

/// Packets a link's sender sent, and of those the ones its receiver did
/// not receive, over the reading intervals of one column.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    sent: f64,
    lost: f64,
}

/// Loss (%) of every link with counter data, over columns of `width`
/// buckets from the window's start (as [`crate::query::link_columns`]).
/// A link whose ends were never both read, or that carried nothing, has no
/// value: a picture shows it as "no data", never as its path's loss.
pub async fn link_loss(
    store: &Store,
    run: &RunInfo,
    w: Window,
    width: i64,
) -> Result<Vec<LinkValue>, QueryError> {
    let rows: Vec<(String, i32, i64, i64, i64)> = on_pool!(store, pool => sqlx::query_as(
        "SELECT switch, port, t_ns, rx, tx FROM port_counters WHERE run_id = $1 \
         ORDER BY switch, port, t_ns",
    )
    .bind(run.id)
    .fetch_all(pool)
    .await)?;
    let mut series: HashMap<(String, u16), Vec<Reading>> = HashMap::new();
    for (switch, port, t, rx, tx) in rows {
        series
            .entry((switch, port as u16))
            .or_default()
            .push((t, rx, tx));
    }
    let bucket_ns = run.bucket_ns.max(1);
    let width = width.max(1);
    let mut out = Vec::new();
    for (id, l) in run.links.iter().enumerate() {
        let key = |n: &str, p: u16| (n.to_owned(), p);
        let (Some(sender), Some(receiver)) = (
            series.get(&key(&l.src, l.src_port)),
            series.get(&key(&l.dst, l.dst_port)),
        ) else {
            continue;
        };
        let received: HashMap<i64, i64> = receiver.iter().map(|&(t, rx, _)| (t, rx)).collect();
        // Readings of both ends taken in the same round.
        let both: Vec<Reading> = sender
            .iter()
            .filter_map(|&(t, _, tx)| Some((t, tx, *received.get(&t)?)))
            .collect();
        let mut columns: HashMap<i64, Tally> = HashMap::new();
        for pair in both.windows(2) {
            let ((t0, tx0, rx0), (t1, tx1, rx1)) = (pair[0], pair[1]);
            let (sent, got) = (tx1 - tx0, rx1 - rx0);
            // A restarted switch counts from zero again: no interval.
            if sent < 0 || got < 0 {
                continue;
            }
            // Signed: the two ends are read a moment apart while packets
            // flow, so one interval's difference may be negative and the
            // next one's larger; over a column they cancel.
            let lost = sent - got;
            // An interval counts whole, in the column of its end (held
            // within the window), so the readings telescope: over a whole
            // window, what the sender sent from the first reading to the
            // last against what the receiver got, whatever the skew of
            // the readings in between.
            let (b0, b1) = (t0.div_euclid(bucket_ns), t1.div_euclid(bucket_ns));
            if b1 < w.from || b0 > w.to {
                continue;
            }
            let b = b1.clamp(w.from, w.to);
            let c = columns
                .entry(w.from + (b - w.from) / width * width)
                .or_default();
            c.sent += sent as f64;
            c.lost += lost as f64;
        }
        for (bucket, c) in columns {
            if c.sent > 0.0 {
                out.push(LinkValue {
                    link: id as u32,
                    bucket,
                    value: 100.0 * c.lost.max(0.0) / c.sent,
                });
            }
        }
    }
    out.sort_by_key(|v| (v.link, v.bucket));
    Ok(out)
}
