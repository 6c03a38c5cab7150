//! Bringing every switch to what the plan implies, by the names of
//! `sr_int.p4` ([`intpath_sr_int`]), over P4Runtime ([`intpath_p4rt`]).
//!
//! `intent` computes what each switch should hold (no I/O); [`deploy`]
//! syncs each switch on its own ([`Client::sync`]), concurrently, so one
//! unreachable switch is reported by name without hiding what happened on
//! the others; [`status`] asks switches by reads alone (no arbitration). This is controller
//! policy: the switch and the protocol crate know nothing of plans.
//! [`DeployRequest`] and [`StatusRequest`] are what `intpath deploy` and
//! `intpath switches status` ask, on a [`Connection`]; [`render`] prints
//! their answers.

mod connection;
mod intent;
pub mod render;
mod request;
mod routes;
mod status;

pub use connection::{check_map, Connection, ConnectionError};
pub use intent::{entries, intents, EntryError, Route, SinkMode, SwitchIntent};
pub use request::{DeployRequest, StatusRequest};
pub use routes::host_routes;
pub use status::{status, Pipeline, StatusQuery, SwitchStatus};

use intpath_core::switch_map::SwitchMap;
/// TLS towards the switches, as the connection settings hold it.
pub use intpath_p4rt::client::ClientTls;
use intpath_p4rt::client::{self, Client, ClientConfig, ClientError, Target};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema::{GENERATOR, IPV4_LPM, SINK, SWITCH_CONFIG};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Every table a deploy owns: entries found there that the plan does not
/// imply are deleted.
pub const MANAGED_TABLES: [&str; 4] = [SWITCH_CONFIG, IPV4_LPM, GENERATOR, SINK];

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("path {path}: {problem}")]
    Plan { path: u16, problem: String },
    #[error("switch {0} is in the plan or topology but not in the switch map")]
    NotInMap(String),
    #[error("switch {name}: device id {id} does not fit the 32-bit INT switch id")]
    SwitchId { name: String, id: u64 },
    #[error("switch {switch}: {cause}")]
    Entry {
        switch: String,
        cause: Box<EntryError>,
    },
    #[error("{} of {} switches failed:\n  {}", .0.len(), .1, .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n  "))]
    Switches(Vec<ClientError>, usize),
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    #[error("{}: cannot read", .path.display())]
    DeviceConfig {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

#[derive(Debug, Clone)]
pub struct DeployOptions {
    pub dry_run: bool,
    pub election_id: u128,
    pub connect_timeout: Duration,
    pub rpc_timeout: Duration,
    /// Target program for a switch without one (bmv2 JSON); the reference
    /// switch accepts an empty config.
    pub device_config: Vec<u8>,
    /// Replace a different pipeline instead of failing on the mismatch.
    pub replace_pipeline: bool,
    /// TLS to the switches (none: plaintext).
    pub tls: Option<ClientTls>,
}

impl Default for DeployOptions {
    fn default() -> Self {
        DeployOptions {
            dry_run: false,
            election_id: u128::from(intpath_core::sessions::DEPLOY),
            connect_timeout: Duration::from_secs(3),
            rpc_timeout: Duration::from_secs(30),
            device_config: Vec::new(),
            replace_pipeline: false,
            tls: None,
        }
    }
}

/// What a deploy did (or, dry, would do) on one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchReport {
    pub name: String,
    pub inserts: usize,
    pub modifies: usize,
    pub deletes: usize,
    pub unchanged: usize,
    pub pipeline_pushed: bool,
    /// Each update, rendered by name.
    pub changes: Vec<String>,
}

/// Brings every switch of the map to its intent. Switches are handled
/// concurrently; all failures are collected and reported together.
pub async fn deploy(
    ix: Arc<P4InfoIndex>,
    switches: &SwitchMap,
    intents: &BTreeMap<String, SwitchIntent>,
    options: &DeployOptions,
) -> Result<Vec<SwitchReport>, DeployError> {
    let managed: Vec<u32> = MANAGED_TABLES
        .iter()
        .map(|t| ix.table(t).map(|t| t.id))
        .collect::<Result<_, _>>()
        .map_err(|e| DeployError::Entry {
            switch: "(all)".into(),
            cause: Box::new(e.into()),
        })?;
    let mut jobs = tokio::task::JoinSet::new();
    for s in &switches.switches {
        let intent = intents.get(&s.name).cloned().unwrap_or_default();
        let desired = entries(&ix, &intent).map_err(|e| DeployError::Entry {
            switch: s.name.clone(),
            cause: Box::new(e),
        })?;
        let mut config = ClientConfig::new(Target {
            name: s.name.clone(),
            addr: s.grpc_addr.clone(),
            device_id: s.device_id,
        });
        config.election_id = options.election_id;
        config.connect_timeout = options.connect_timeout;
        config.rpc_timeout = options.rpc_timeout;
        config.tls = options.tls.clone();
        let (ix, managed, options) = (ix.clone(), managed.clone(), options.clone());
        jobs.spawn(async move { deploy_one(config, ix, desired, &managed, &options).await });
    }
    let mut reports = Vec::new();
    let mut failures = Vec::new();
    while let Some(joined) = jobs.join_next().await {
        match joined {
            Ok(Ok(r)) => reports.push(r),
            Ok(Err(e)) => failures.push(e),
            Err(panic) => std::panic::resume_unwind(panic.into_panic()),
        }
    }
    if !failures.is_empty() {
        failures.sort_by_key(|e| e.to_string());
        return Err(DeployError::Switches(failures, switches.switches.len()));
    }
    reports.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(reports)
}

async fn deploy_one(
    config: ClientConfig,
    ix: Arc<P4InfoIndex>,
    desired: Vec<p4::TableEntry>,
    managed: &[u32],
    options: &DeployOptions,
) -> Result<SwitchReport, ClientError> {
    let name = config.target.name.clone();
    let mut client = Client::connect(config).await?;
    let pipeline_pushed = if options.dry_run {
        match client.get_pipeline().await? {
            Some((remote, _)) if remote == *ix.p4info() => false,
            Some((remote, _)) if !options.replace_pipeline => {
                return Err(ClientError::P4InfoMismatch {
                    target: client.target().clone(),
                    difference: client::p4info_difference(ix.p4info(), &remote),
                })
            }
            _ => true,
        }
    } else {
        client
            .ensure_pipeline(
                ix.clone(),
                &options.device_config,
                1,
                options.replace_pipeline,
            )
            .await?
    };
    client.use_p4info(ix);
    let plan = if options.dry_run {
        client.plan_sync(&desired, managed).await?
    } else {
        client.sync(&desired, managed).await?
    };
    Ok(SwitchReport {
        name,
        inserts: plan.inserts,
        modifies: plan.modifies,
        deletes: plan.deletes,
        unchanged: plan.unchanged,
        pipeline_pushed,
        changes: plan
            .updates
            .iter()
            .map(|u| client.describe_update(u))
            .collect(),
    })
}
