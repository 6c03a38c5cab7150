//! Runs: what a collector measures (topology, plan, bucket width, raw rows
//! kept) and which collectors write it.

use crate::links::LinkMap;
use crate::rows::StoreMode;
use crate::{on_pool, RunId, Store, StoreError};
use intpath_core::plan::Plan;
use intpath_core::time::now_ns;
use sqlx::Row as _;
use std::collections::HashMap;

/// Registers a collector in run `$1` at `$2` ns; returns its id.
const JOIN_RUN: &str = "INSERT INTO collectors (run_id, started_ns) VALUES ($1, $2) RETURNING id";

impl Store {
    /// Records a new run with the topology and plan it measures, keeping
    /// every raw probe row, or, with a `key`, joins the run other collectors
    /// started under the same key (the first one records the topology and
    /// plan).
    pub async fn begin_run(
        &self,
        links: &LinkMap,
        plan: &Plan,
        bucket_ns: u64,
        key: Option<&str>,
    ) -> Result<RunId, StoreError> {
        self.begin_run_storing(links, plan, bucket_ns, StoreMode::Raw, key)
            .await
    }

    /// [`Store::begin_run`] for a run that keeps the raw rows `mode` says
    /// (a run joined by key keeps the mode its first collector recorded).
    pub async fn begin_run_storing(
        &self,
        links: &LinkMap,
        plan: &Plan,
        bucket_ns: u64,
        mode: StoreMode,
        key: Option<&str>,
    ) -> Result<RunId, StoreError> {
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let run: RunId = sqlx::query_scalar(
                "INSERT INTO runs \
                 (started_ns, bucket_ns, topology, plan_algo, store_mode, key, topology_json) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (key) DO UPDATE SET key = excluded.key RETURNING id",
            )
            .bind(now_ns() as i64)
            .bind(bucket_ns as i64)
            .bind(&plan.topology)
            .bind(&plan.algo)
            .bind(mode.to_string())
            .bind(key)
            .bind(links.topology_json())
            .fetch_one(&mut *tx)
            .await?;
            for (pos, (name, id)) in links.switches().iter().enumerate() {
                sqlx::query(
                    "INSERT INTO switches (run_id, pos, id, name) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT DO NOTHING",
                )
                .bind(run)
                .bind(pos as i64)
                .bind(i64::from(*id))
                .bind(name)
                .execute(&mut *tx)
                .await?;
            }
            for (id, l) in links.links().iter().enumerate() {
                sqlx::query(
                    "INSERT INTO links (run_id, id, src, src_port, dst, dst_port) \
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                )
                .bind(run)
                .bind(id as i64)
                .bind(&l.src)
                .bind(i64::from(l.src_port))
                .bind(&l.dst)
                .bind(i64::from(l.dst_port))
                .execute(&mut *tx)
                .await?;
            }
            for p in &plan.paths {
                let nodes = serde_json::to_string(&p.nodes).unwrap_or_default();
                sqlx::query(
                    "INSERT INTO paths (run_id, id, nodes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                )
                .bind(run)
                .bind(i64::from(p.id))
                .bind(nodes)
                .execute(&mut *tx)
                .await?;
                let hops = p.nodes.iter().zip(&p.egress_ports);
                for (pos, (node, port)) in hops.enumerate() {
                    let Some(link) = links.egress_link(node, *port) else {
                        continue;
                    };
                    sqlx::query(
                        "INSERT INTO path_links (run_id, path_id, pos, link_id) \
                         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                    )
                    .bind(run)
                    .bind(i64::from(p.id))
                    .bind(pos as i64)
                    .bind(i64::from(link))
                    .execute(&mut *tx)
                    .await?;
                }
            }
            let collector: i64 = sqlx::query_scalar(
                JOIN_RUN,
            )
            .bind(run)
            .bind(now_ns() as i64)
            .fetch_one(&mut *tx)
            .await?;
            tx.commit().await?;
            self.collectors_of_runs().insert(run, collector);
            Ok(run)
        })
    }

    fn collectors_of_runs(&self) -> std::sync::MutexGuard<'_, HashMap<RunId, i64>> {
        // The map is only ever inserted into: a panic elsewhere cannot leave
        // it half-written.
        self.collectors.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This store's collector id in `run`: the one [`Store::begin_run`] made,
    /// else a new one (a store writing a run it did not begin).
    pub(crate) async fn collector_in(&self, run: RunId) -> Result<i64, StoreError> {
        if let Some(&id) = self.collectors_of_runs().get(&run) {
            return Ok(id);
        }
        let id: i64 = on_pool!(self, pool => sqlx::query_scalar(
            JOIN_RUN,
        )
        .bind(run)
        .bind(now_ns() as i64)
        .fetch_one(pool)
        .await)?;
        Ok(*self.collectors_of_runs().entry(run).or_insert(id))
    }

    /// How many collectors have joined `run` (each `begin_run` under its key).
    pub async fn collectors(&self, run: RunId) -> Result<i64, StoreError> {
        Ok(on_pool!(self, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM collectors WHERE run_id = $1",
        )
        .bind(run)
        .fetch_one(pool)
        .await)?)
    }

    /// Which raw rows run `run` kept. A SQLite database from before
    /// migration 0005 (read, never migrated, by the query commands) kept them
    /// all.
    pub async fn store_mode(&self, run: RunId) -> Result<StoreMode, StoreError> {
        let mode = on_pool!(self, pool => {
            let row = sqlx::query("SELECT * FROM runs WHERE id = $1")
                .bind(run)
                .fetch_one(pool)
                .await?;
            row.try_get::<String, _>("store_mode")
        });
        match mode {
            Ok(mode) => mode
                .parse()
                .map_err(|source| StoreError::StoreMode { run, source }),
            Err(sqlx::Error::ColumnNotFound(_)) => Ok(StoreMode::Raw),
            Err(e) => Err(e.into()),
        }
    }

    /// The topology run `run` recorded (`None` for a run recorded before
    /// runs kept theirs, also in a database not yet migrated).
    pub async fn run_topology(&self, run: RunId) -> Result<Option<String>, StoreError> {
        let topology = on_pool!(self, pool => {
            let row = sqlx::query("SELECT * FROM runs WHERE id = $1")
                .bind(run)
                .fetch_one(pool)
                .await?;
            row.try_get::<Option<String>, _>("topology_json")
        });
        match topology {
            Ok(t) => Ok(t),
            Err(sqlx::Error::ColumnNotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}
