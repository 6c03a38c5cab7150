//! Switch port counters read during a run: where loss happens, link by
//! link. A probe lost on a path was lost on one of its links, but which
//! one the probes cannot say; the sender's egress counter against the
//! receiver's ingress counter can.

use crate::query::{LinkValue, QueryError, RunInfo, Window};
use crate::{on_pool, RunId, Store, StoreError};
use intpath_core::link::DirLink;
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

/// What one link's two ends counted between two consecutive rounds of
/// readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Interval {
    /// Times of the two rounds, ns.
    from_ns: i64,
    to_ns: i64,
    /// Packets the sender's port sent.
    sent: i64,
    /// Of those, packets the receiver's port did not receive. Signed: the
    /// two ends are read a moment apart while packets flow, so one
    /// interval's difference may be negative and the next one's larger;
    /// summed over consecutive intervals they cancel (the readings
    /// telescope to what was sent from the first reading to the last
    /// against what was received).
    lost: i64,
}

/// Per link of `links` (by index) whose two ends were read in the same
/// rounds: its intervals, in time order. A link whose ends were never
/// both read has none.
async fn link_intervals(
    store: &Store,
    run: RunId,
    links: &[DirLink],
) -> Result<Vec<Vec<Interval>>, StoreError> {
    let rows: Vec<(String, i32, i64, i64, i64)> = on_pool!(store, pool => sqlx::query_as(
        "SELECT switch, port, t_ns, rx, tx FROM port_counters WHERE run_id = $1 \
         ORDER BY switch, port, t_ns",
    )
    .bind(run)
    .fetch_all(pool)
    .await)?;
    let mut series: HashMap<(String, u16), Vec<Reading>> = HashMap::new();
    for (switch, port, t, rx, tx) in rows {
        series
            .entry((switch, port as u16))
            .or_default()
            .push((t, rx, tx));
    }
    Ok(links
        .iter()
        .map(|l| {
            let key = |n: &str, p: u16| (n.to_owned(), p);
            let (Some(sender), Some(receiver)) = (
                series.get(&key(&l.src, l.src_port)),
                series.get(&key(&l.dst, l.dst_port)),
            ) else {
                return Vec::new();
            };
            let received: HashMap<i64, i64> = receiver.iter().map(|&(t, rx, _)| (t, rx)).collect();
            // Readings of both ends taken in the same round.
            let both: Vec<Reading> = sender
                .iter()
                .filter_map(|&(t, _, tx)| Some((t, tx, *received.get(&t)?)))
                .collect();
            both.windows(2)
                .filter_map(|pair| {
                    let ((t0, tx0, rx0), (t1, tx1, rx1)) = (pair[0], pair[1]);
                    let (sent, got) = (tx1 - tx0, rx1 - rx0);
                    // A restarted switch counts from zero again: no interval.
                    (sent >= 0 && got >= 0).then_some(Interval {
                        from_ns: t0,
                        to_ns: t1,
                        sent,
                        lost: sent - got,
                    })
                })
                .collect()
        })
        .collect())
}

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
    let intervals = link_intervals(store, run.id, &run.links).await?;
    let bucket_ns = run.bucket_ns.max(1);
    let width = width.max(1);
    let mut out = Vec::new();
    for (id, link) in intervals.iter().enumerate() {
        let mut columns: HashMap<i64, Tally> = HashMap::new();
        for i in link {
            // An interval counts whole, in the column of its end (held
            // within the window), so that a column's intervals telescope
            // whatever the skew of the readings in between.
            let (b0, b1) = (
                i.from_ns.div_euclid(bucket_ns),
                i.to_ns.div_euclid(bucket_ns),
            );
            if b1 < w.from || b0 > w.to {
                continue;
            }
            let b = b1.clamp(w.from, w.to);
            let c = columns
                .entry(w.from + (b - w.from) / width * width)
                .or_default();
            c.sent += i.sent as f64;
            c.lost += i.lost as f64;
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

/// What a link's two ends counted over a whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkCount {
    /// Packets the sender's port sent.
    pub sent: u64,
    /// Of those, packets the receiver's port did not receive.
    pub lost: u64,
}

impl LinkCount {
    /// The share of what was sent that was lost; 0 for a link that sent
    /// nothing.
    pub fn rate(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost as f64 / self.sent as f64
        }
    }
}

/// Per link of `links` (by index), what its ends counted over run `run`;
/// `None` where the two ends were never both read.
pub async fn link_counts(
    store: &Store,
    run: RunId,
    links: &[DirLink],
) -> Result<Vec<Option<LinkCount>>, StoreError> {
    Ok(link_intervals(store, run, links)
        .await?
        .into_iter()
        .map(|is| {
            (!is.is_empty()).then(|| {
                let (sent, lost) = is.iter().fold((0, 0), |(s, l), i| (s + i.sent, l + i.lost));
                LinkCount {
                    sent: sent as u64,
                    lost: lost.clamp(0, sent) as u64,
                }
            })
        })
        .collect())
}
