//! What `intpath switches status` asks each switch.

use super::{DeployOptions, MANAGED_TABLES};
use intpath_core::switch_map::SwitchMap;
use intpath_p4rt::client::{Arbitration, Client, ClientConfig, ClientError, Target};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_sr_int::schema::{DROP_COUNTER, RX_PORT_COUNTER, TX_PORT_COUNTER};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What `intpath switches status` shows for one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchStatus {
    pub name: String,
    pub addr: String,
    /// Why the switch could not be asked (unreachable, no answer...).
    pub error: Option<String>,
    pub arbitration: Option<Arbitration>,
    /// Entries per managed table, in [`MANAGED_TABLES`] order (the default
    /// entry of `switch_config` not counted).
    pub entries: Vec<(String, usize)>,
    /// `(port, rx packets, tx packets)` for every port that saw traffic.
    pub ports: Vec<(i64, i64, i64)>,
    /// `(reason, packets)` of non-zero drop counters.
    pub drops: Vec<(i64, i64)>,
}

/// Asks every switch, concurrently, as an observer (never taking the
/// primary role from a running controller).
pub async fn status(
    ix: Arc<P4InfoIndex>,
    switches: &SwitchMap,
    options: &DeployOptions,
) -> Vec<SwitchStatus> {
    let mut jobs = tokio::task::JoinSet::new();
    for s in &switches.switches {
        let mut config = ClientConfig::new(Target {
            name: s.name.clone(),
            addr: s.grpc_addr.clone(),
            device_id: s.device_id,
        });
        // Below any controller's id, so asking never steals primaryship.
        config.election_id = 0;
        config.connect_timeout = options.connect_timeout;
        config.rpc_timeout = options.rpc_timeout;
        let ix = ix.clone();
        jobs.spawn(async move {
            let mut st = SwitchStatus {
                name: config.target.name.clone(),
                addr: config.target.addr.clone(),
                error: None,
                arbitration: None,
                entries: Vec::new(),
                ports: Vec::new(),
                drops: Vec::new(),
            };
            if let Err(e) = status_one(config, ix, &mut st).await {
                st.error = Some(e.to_string());
            }
            st
        });
    }
    let mut out = Vec::new();
    while let Some(joined) = jobs.join_next().await {
        match joined {
            Ok(st) => out.push(st),
            Err(panic) => std::panic::resume_unwind(panic.into_panic()),
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

async fn status_one(
    config: ClientConfig,
    ix: Arc<P4InfoIndex>,
    st: &mut SwitchStatus,
) -> Result<(), ClientError> {
    let mut client = Client::connect_observer(config).await?;
    st.arbitration = Some(client.arbitration());
    client.use_p4info(ix);
    let all = client.read_table_entries(None).await?;
    for table in MANAGED_TABLES {
        let id = client
            .index()
            .and_then(|ix| ix.table(table).ok())
            .map(|t| t.id);
        let n = all.iter().filter(|e| Some(e.table_id) == id).count();
        st.entries.push((table.to_owned(), n));
    }
    let rx = client.read_counter(RX_PORT_COUNTER, None).await?;
    let tx = client.read_counter(TX_PORT_COUNTER, None).await?;
    let mut ports: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for &(port, packets, _) in &rx {
        ports.entry(port).or_default().0 = packets;
    }
    for &(port, packets, _) in &tx {
        ports.entry(port).or_default().1 = packets;
    }
    st.ports = ports
        .into_iter()
        .filter(|(_, (r, t))| r + t > 0)
        .map(|(p, (r, t))| (p, r, t))
        .collect();
    st.drops = client
        .read_counter(DROP_COUNTER, None)
        .await?
        .into_iter()
        .filter(|&(_, p, _)| p > 0)
        .map(|(i, p, _)| (i, p))
        .collect();
    Ok(())
}
