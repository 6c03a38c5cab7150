//! The requests of `intpath deploy` and `intpath switches status`: a plan
//! and a topology (or neither) on the switches of a [`Connection`].

use super::{
    deploy, host_routes, intents, status, Connection, DeployError, SinkMode, StatusQuery,
    SwitchReport, SwitchStatus,
};
use intpath_core::plan::Plan;
use intpath_core::sessions;
use intpath_core::topo::Topology;
use std::path::PathBuf;

/// Install `plan` on the switches: a minimal diff, or only its report.
#[derive(Debug, Clone)]
pub struct DeployRequest {
    /// The topology the plan was made for.
    pub topo: Topology,
    pub plan: Plan,
    pub connection: Connection,
    /// Where each path's last switch sends the finished probe.
    pub sink: SinkMode,
    /// Target config pushed with the P4Info to a switch without a pipeline
    /// (bmv2 JSON from p4c); the reference switch needs none.
    pub device_config: Option<PathBuf>,
    /// Replace a different pipeline instead of stopping at the first
    /// differing name.
    pub replace_pipeline: bool,
    /// Compute every change, write nothing.
    pub dry_run: bool,
}

impl DeployRequest {
    /// One report per switch, by name; every switch's failure together.
    pub async fn run(&self) -> Result<Vec<SwitchReport>, DeployError> {
        let (map, ix) = self.connection.load_for(&self.topo)?;
        let intents = intents(&self.plan, &map, host_routes(&self.topo), self.sink)?;
        let mut options = self.connection.options(sessions::DEPLOY);
        options.dry_run = self.dry_run;
        options.replace_pipeline = self.replace_pipeline;
        if let Some(path) = &self.device_config {
            options.device_config =
                std::fs::read(path).map_err(|source| DeployError::DeviceConfig {
                    path: path.clone(),
                    source,
                })?;
        }
        deploy(ix, &map, &intents, &options).await
    }
}

/// Ask every switch what it is doing, by reads alone (plus the arbitration
/// view as an observer).
#[derive(Debug, Clone)]
pub struct StatusRequest {
    pub connection: Connection,
    /// The plan the switches should hold and the topology it was made for:
    /// entry counts are shown against it, so that a switch that restarted
    /// (and lost its entries) stands out.
    pub planned: Option<(Plan, Topology)>,
}

impl StatusRequest {
    /// Every switch's status, by name (an unreachable one says why).
    pub async fn run(&self) -> Result<Vec<SwitchStatus>, DeployError> {
        let (map, ix) = self.connection.load()?;
        let intents = match &self.planned {
            Some((plan, topo)) => {
                super::check_map(topo, &map, &self.connection.switches)?;
                Some(intents(plan, &map, host_routes(topo), SinkMode::Collector)?)
            }
            None => None,
        };
        let query = StatusQuery {
            arbitrate_as: Some(self.connection.options(sessions::OBSERVER).election_id),
            intents,
        };
        Ok(status(ix, &map, &self.connection.options(0), &query).await)
    }
}
