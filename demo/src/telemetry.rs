//! What the demo reads back from the collector's database while it runs and
//! at the end, through the collector's own queries.

use anyhow::Result;
use intpath_core::link::DirLink;
use intpath_store::query::{self, Metric, PathSummary, RunInfo, Stat, Window};
use intpath_store::{Db, RunId, Store};

/// The newest run in `db`, or `None` while the database does not exist.
pub async fn newest_run(db: &Db) -> Result<Option<RunId>> {
    if matches!(db, Db::Sqlite(p) if !p.is_file()) {
        return Ok(None);
    }
    let Ok(store) = Store::open_existing(db).await else {
        // Created but not yet initialised by the collector.
        return Ok(None);
    };
    let run = RunInfo::load(&store, None).await.ok().map(|r| r.id);
    store.close().await;
    Ok(run)
}

/// How many collectors have joined `run`.
pub async fn joined(db: &Db, run: RunId) -> Result<i64> {
    let store = Store::open_existing(db).await?;
    let n = store.collectors(run).await;
    store.close().await;
    Ok(n?)
}

/// One link's summarised metric over a whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct Hot {
    pub link: DirLink,
    pub value: f64,
}

/// A run as the demo reports it.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub paths: Vec<PathSummary>,
    /// Links by mean queue depth, highest first.
    pub by_qdepth: Vec<Hot>,
    /// Links by mean queueing delay, highest first.
    pub by_qdelay: Vec<Hot>,
}

impl Snapshot {
    pub async fn read(db: &Db, run: RunId) -> Result<Self> {
        let store = Store::open_existing(db).await?;
        let info = RunInfo::load(&store, Some(run)).await?;
        if info.buckets.is_none() {
            store.close().await;
            return Ok(Self::default());
        }
        let w = info.window(None, None)?;
        let paths = query::path_summaries(&store, &info, w).await?;
        let by_qdepth = ranked(&store, &info, Metric::Qdepth, w).await?;
        let by_qdelay = ranked(&store, &info, Metric::Qdelay, w).await?;
        store.close().await;
        Ok(Self {
            paths,
            by_qdepth,
            by_qdelay,
        })
    }

    pub fn probes(&self) -> i64 {
        self.paths.iter().map(|p| p.probes).sum()
    }
}

/// Every measured link's mean `metric` over `w`, highest first.
async fn ranked(store: &Store, info: &RunInfo, metric: Metric, w: Window) -> Result<Vec<Hot>> {
    let mut v = query::link_values(store, info, metric, Stat::Mean, w, false).await?;
    v.sort_by(|a, b| b.value.total_cmp(&a.value));
    Ok(v.into_iter()
        .filter_map(|v| {
            Some(Hot {
                link: info.links.get(v.link as usize)?.clone(),
                value: v.value,
            })
        })
        .collect())
}
