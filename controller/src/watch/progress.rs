//! What watch reads from the collector's database: the newest run's
//! progress on every path of the plan in force.

use intpath_core::plan::Plan;
use intpath_store::query::{path_progress, PathProgress};
use intpath_store::{Db, Store};
use std::collections::BTreeSet;

/// The collector's database, opened once it exists.
pub(super) struct CollectorDb {
    db: Db,
    store: Option<Store>,
    /// The run whose plan differs from ours, already reported.
    foreign_run: Option<i64>,
    /// Silent paths already reported as unexplained.
    pub(super) unexplained: BTreeSet<u16>,
    /// Paths without a single probe, already reported.
    pub(super) unsent: BTreeSet<u16>,
}

impl CollectorDb {
    pub(super) fn new(db: Db) -> Self {
        Self {
            db,
            store: None,
            foreign_run: None,
            unexplained: BTreeSet::new(),
            unsent: BTreeSet::new(),
        }
    }

    /// The newest run's progress, if that run measures `plan` (a collector
    /// still on the previous plan says nothing about this one).
    pub(super) async fn progress(&mut self, plan: &Plan) -> Option<(i64, Vec<PathProgress>)> {
        if self.store.is_none() {
            match Store::open_existing(&self.db).await {
                Ok(s) => self.store = Some(s),
                Err(e) => {
                    tracing::debug!("collector database not readable yet: {e}");
                    return None;
                }
            }
        }
        let store = self.store.as_ref()?;
        let (run, progress) = match path_progress(store).await {
            Ok(p) => p?,
            Err(e) => {
                tracing::warn!("cannot read {}: {e}", self.db);
                return None;
            }
        };
        if !super::follows_plan(plan, &progress) {
            if self.foreign_run != Some(run) {
                tracing::info!(
                    run,
                    "the collector's newest run follows another plan; waiting for one on the plan in force"
                );
                self.foreign_run = Some(run);
            }
            return None;
        }
        Some((run, progress))
    }
}
