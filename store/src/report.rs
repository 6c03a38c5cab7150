//! The answers `intpath query` prints, as tables, with typed questions in.

use crate::query::{self, Metric, QueryError, RunInfo, Stat, TimeRange};
use crate::table::Table;
use crate::{Db, RunId, Store};

/// What to ask of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// One link (`SRC:PORT->DST` as printed, `SRC:PORT` or `SRC->DST`),
    /// bucket by bucket.
    Link {
        link: String,
        metric: Metric,
        range: TimeRange,
    },
    /// The `top` links with the highest metric over a range; idle links
    /// (a value of 0) are never listed.
    Hottest {
        metric: Metric,
        stat: Stat,
        range: TimeRange,
        top: usize,
    },
    /// Per-path probes, loss, duplicates, reordering and end-to-end delay.
    Paths(TimeRange),
    /// Probes that were not stored, by reason.
    Rejects,
    /// The runs in the database.
    Runs,
}

/// Answers `q` about `run` (default: the newest) of database `db`.
pub async fn answer(db: &Db, run: Option<RunId>, q: &Question) -> Result<Table, QueryError> {
    let store = Store::open_existing(db).await?;
    let out = answer_in(&store, run, q).await;
    store.close().await;
    out
}

async fn answer_in(store: &Store, run: Option<RunId>, q: &Question) -> Result<Table, QueryError> {
    let load = || RunInfo::load(store, run);
    Ok(match q {
        Question::Runs => {
            let mut t = Table::new(vec![
                "run",
                "topology",
                "plan",
                "bucket_ms",
                "store",
                "probes",
                "raw_probes",
            ]);
            for r in query::runs(store).await? {
                t.push_record(&r);
            }
            t
        }
        Question::Link {
            link,
            metric,
            range,
        } => {
            let run = load().await?;
            let id = run.find_link(link)?;
            let w = run.window(range.from, range.to)?;
            let mut t = Table::new(vec!["t", "samples", "min", "mean", "max"]);
            for p in query::link_series(store, &run, id, *metric, w).await? {
                t.push_record(&p);
            }
            t
        }
        Question::Hottest {
            metric,
            stat,
            range,
            top,
        } => {
            let run = load().await?;
            let w = run.window(range.from, range.to)?;
            let mut values = query::link_values(store, &run, *metric, *stat, w, false).await?;
            // An idle link (no queue, no loss) is not hot, however few are.
            values.retain(|v| v.value > 0.0);
            // Ties by link id: PostgreSQL groups in no fixed order.
            values.sort_by(|a, b| b.value.total_cmp(&a.value).then(a.link.cmp(&b.link)));
            // The topology's own names for the ends, when it has any.
            let labelled = !run.labels.is_empty();
            let mut columns = vec!["link", "value", "unit"];
            if labelled {
                columns.push("label");
            }
            let mut t = Table::new(columns);
            for v in values.iter().take(*top) {
                let link = run.links.get(v.link as usize);
                let name = link.map_or_else(|| v.link.to_string(), |l| l.to_string());
                let mut row = vec![name.into(), v.value.into(), metric.unit().into()];
                if labelled {
                    let label = link.and_then(|l| run.link_label(l)).unwrap_or_default();
                    row.push(label.into());
                }
                t.rows.push(row);
            }
            t
        }
        Question::Paths(range) => {
            let run = load().await?;
            let w = run.window(range.from, range.to)?;
            let mut t = Table::new(vec![
                "path",
                "probes",
                "lost",
                "loss_pct",
                "duplicates",
                "reordered",
                "e2e_mean_us",
                "e2e_max_us",
            ]);
            for p in query::path_summaries(store, &run, w).await? {
                t.push_record(&p);
            }
            t
        }
        Question::Rejects => {
            let run = load().await?;
            let mut t = Table::new(vec!["reason", "count"]);
            for (reason, n) in query::rejects(store, &run).await? {
                t.rows.push(vec![reason.into(), n.into()]);
            }
            t
        }
    })
}
