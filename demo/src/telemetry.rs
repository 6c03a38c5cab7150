//! What the demo reads back from the collector's database while it runs and
//! at the end, through the collector's own queries.

use anyhow::Result;
use intpath_core::link::DirLink;
use intpath_store::query::{self, LinkValue, Metric, PathSummary, RunInfo, Stat, Window};
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
    /// Links that queued, by mean queue depth, highest first.
    pub by_qdepth: Vec<Hot>,
    /// Links that queued, by mean queueing delay, highest first.
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
    let v = query::link_values(store, info, metric, Stat::Mean, w, false).await?;
    Ok(hot_first(v, &info.links))
}

/// The links that queued, highest first: an idle link is never among the
/// hottest, however few links queued.
fn hot_first(mut v: Vec<LinkValue>, links: &[DirLink]) -> Vec<Hot> {
    v.retain(|v| v.value > 0.0);
    v.sort_by(|a, b| b.value.total_cmp(&a.value).then(a.link.cmp(&b.link)));
    v.into_iter()
        .filter_map(|v| {
            Some(Hot {
                link: links.get(v.link as usize)?.clone(),
                value: v.value,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_links_are_never_hot() {
        let links: Vec<DirLink> = (1..=3)
            .map(|p| DirLink {
                src: "s1".into(),
                src_port: p,
                dst: format!("s{}", p + 1),
                dst_port: 1,
            })
            .collect();
        let value = |link, value| LinkValue {
            link,
            bucket: 0,
            value,
        };
        let hot = hot_first(vec![value(0, 0.0), value(1, 0.5), value(2, 9.0)], &links);
        let names: Vec<String> = hot.iter().map(|h| h.link.to_string()).collect();
        assert_eq!(names, ["s1:3->s4", "s1:2->s3"]);
        assert!(hot_first(vec![value(0, 0.0)], &links).is_empty());
    }
}
