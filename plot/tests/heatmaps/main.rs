//! Heatmaps over a database the real pipeline filled.
//!
//! Every test reads back the database `lossy_db` writes through the real
//! collector, once on SQLite and once on PostgreSQL; `pictures` looks at
//! what is drawn, `ranges` at what is refused and at runs that kept buckets
//! only.

mod pictures;
mod ranges;

use intpath_plot::heatmap::{HeatmapKind, HeatmapRequest};
use intpath_store::query::{Metric, RunInfo, Stat, TimeRange};
use intpath_store::{Db, Store, StoreMode};
pub use intpath_test_support::telemetry::*;
use std::path::PathBuf;
use tempfile::TempDir;

pub fn luminance(img: &image::RgbImage, (x, y): (i32, i32)) -> f64 {
    let p = img.get_pixel(x as u32, y as u32).0;
    0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2])
}

pub fn rgb_at(img: &image::RgbImage, (x, y): (i32, i32)) -> [u8; 3] {
    img.get_pixel(x as u32, y as u32).0
}

pub fn request(db: &Db, out: PathBuf, kind: HeatmapKind) -> HeatmapRequest {
    HeatmapRequest {
        db: db.clone(),
        run: None,
        metric: Metric::Qdepth,
        stat: Stat::Mean,
        out,
        kind,
    }
}

pub const ALL: TimeRange = TimeRange {
    from: None,
    to: None,
};

/// The filled database opened for reading, with its run: what every
/// read-back test starts from.
pub struct Filled {
    pub dir: TempDir,
    pub db: Db,
    pub store: Store,
    pub run: RunInfo,
}

impl Filled {
    /// Fills `db` (a path or a `postgres://` URL, as `on_both_backends!`
    /// hands out).
    pub async fn open(db: String) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = lossy_db(db).await;
        let store = Store::open_existing(&db).await.unwrap();
        let run = RunInfo::load(&store, None).await.unwrap();
        Self {
            dir,
            db,
            store,
            run,
        }
    }
}
