//! What `intpath switches status` and `intpath watch` ask each switch.
//!
//! Everything here is a read, and reads need no arbitration: the switch is
//! asked without opening a stream channel, so looking never collides with a
//! controller's election id and a refused arbitration is never mistaken for
//! a dead switch. Only the optional arbitration view opens a stream, as a
//! backup with [`intpath_core::sessions::OBSERVER`]'s id, and its failure is
//! reported beside the switch's state, never as the switch being down.

use super::{entries, DeployOptions, SwitchIntent, MANAGED_TABLES};
use intpath_core::switch_map::SwitchMap;
use intpath_p4rt::client::{Arbitration, Client, ClientConfig, ClientError, Target};
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema::{
    DROP_COUNTER, RX_PORT_COUNTER, SET_SWITCH_ID, SWITCH_CONFIG, TX_PORT_COUNTER,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What to ask beyond reachability, entries and counters.
#[derive(Debug, Clone, Default)]
pub struct StatusQuery {
    /// Learn who is primary, by arbitrating as a backup with this election
    /// id (None: open no stream at all, as watch does).
    pub arbitrate_as: Option<u128>,
    /// The plan's intent per switch, to count what each switch should hold.
    pub intents: Option<BTreeMap<String, SwitchIntent>>,
}

/// The forwarding pipeline a switch reports (GetForwardingPipelineConfig).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pipeline {
    /// None installed: the switch cannot forward anything.
    None,
    /// Our program's P4Info, with the cookie of the push (0: never pushed,
    /// e.g. the reference switch's built-in program after a restart).
    Ours { cookie: u64 },
    /// Another program.
    Other,
}

/// What `intpath switches status` shows for one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchStatus {
    pub name: String,
    pub addr: String,
    pub device_id: u64,
    /// Why the switch could not be read (unreachable, no answer...).
    pub error: Option<String>,
    /// Who is primary, when asked ([`StatusQuery::arbitrate_as`]); Err says
    /// why the arbitration view failed while reads worked.
    pub arbitration: Option<Result<Arbitration, String>>,
    pub pipeline: Option<Pipeline>,
    /// The INT switch id in `switch_config`'s default entry; None when
    /// unset: no `set_switch_id`, or the program's initial 0, as on a switch
    /// restarted since its deploy (a deploy writes the device id, never 0).
    pub switch_id: Option<u32>,
    /// Entries per managed table, in [`MANAGED_TABLES`] order (the default
    /// entry of `switch_config` not counted).
    pub entries: Vec<(String, usize)>,
    /// What the plan's intent puts in each managed table, same order (empty
    /// without [`StatusQuery::intents`]).
    pub planned: Vec<(String, usize)>,
    /// `(port, rx packets, tx packets)` for every port that saw traffic.
    pub ports: Vec<(i64, i64, i64)>,
    /// `(reason, packets)` of non-zero drop counters.
    pub drops: Vec<(i64, i64)>,
}

impl SwitchStatus {
    /// Whether the switch holds fewer or other entries than the plan says
    /// (false without an intent to compare with).
    pub fn differs_from_plan(&self) -> bool {
        !self.planned.is_empty() && self.planned != self.entries
    }
}

/// Asks every switch, concurrently, by reads only (plus the arbitration
/// view when asked).
pub async fn status(
    ix: Arc<P4InfoIndex>,
    switches: &SwitchMap,
    options: &DeployOptions,
    query: &StatusQuery,
) -> Vec<SwitchStatus> {
    let mut jobs = tokio::task::JoinSet::new();
    for s in &switches.switches {
        let mut config = ClientConfig::new(Target {
            name: s.name.clone(),
            addr: s.grpc_addr.clone(),
            device_id: s.device_id,
        });
        config.connect_timeout = options.connect_timeout;
        config.rpc_timeout = options.rpc_timeout;
        config.tls = options.tls.clone();
        let mut st = SwitchStatus {
            name: s.name.clone(),
            addr: s.grpc_addr.clone(),
            device_id: s.device_id,
            error: None,
            arbitration: None,
            pipeline: None,
            switch_id: None,
            entries: Vec::new(),
            planned: Vec::new(),
            ports: Vec::new(),
            drops: Vec::new(),
        };
        if let Some(intent) = query.intents.as_ref().and_then(|i| i.get(&s.name)) {
            st.planned = planned(&ix, intent);
        }
        let (ix, arbitrate_as) = (ix.clone(), query.arbitrate_as);
        jobs.spawn(async move {
            if let Err(e) = read_one(&config, ix, &mut st).await {
                st.error = Some(e.to_string());
            } else if let Some(id) = arbitrate_as {
                st.arbitration = Some(arbitration(config, id).await);
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

/// Entries the intent puts in each managed table.
fn planned(ix: &P4InfoIndex, intent: &SwitchIntent) -> Vec<(String, usize)> {
    let want = entries(ix, intent).unwrap_or_default();
    MANAGED_TABLES
        .iter()
        .map(|&table| {
            let id = ix.table(table).map(|t| t.id).ok();
            let n = want
                .iter()
                .filter(|e| Some(e.table_id) == id && !e.is_default_action)
                .count();
            (table.to_owned(), n)
        })
        .collect()
}

async fn arbitration(mut config: ClientConfig, id: u128) -> Result<Arbitration, String> {
    config.election_id = id;
    Client::connect_observer(config)
        .await
        .map(|c| c.arbitration())
        .map_err(|e| e.to_string())
}

async fn read_one(
    config: &ClientConfig,
    ix: Arc<P4InfoIndex>,
    st: &mut SwitchStatus,
) -> Result<(), ClientError> {
    let mut client = Client::connect_reader(config.clone()).await?;
    st.pipeline = Some(match client.get_pipeline().await? {
        None => Pipeline::None,
        Some((p4info, cookie)) if p4info == *ix.p4info() => Pipeline::Ours { cookie },
        Some(_) => Pipeline::Other,
    });
    client.use_p4info(ix.clone());
    st.switch_id = client
        .read_default_entry(SWITCH_CONFIG)
        .await?
        .and_then(|e| switch_id(&ix, &e));
    let all = client.read_table_entries(None).await?;
    for table in MANAGED_TABLES {
        let id = ix.table(table).ok().map(|t| t.id);
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

/// The switch id a `set_switch_id` default action carries (its only
/// parameter); None for any other default action.
fn switch_id(ix: &P4InfoIndex, entry: &p4::TableEntry) -> Option<u32> {
    let action = match entry.action.as_ref()?.r#type.as_ref()? {
        p4::table_action::Type::Action(a) => a,
        _ => return None,
    };
    if ix.action(SET_SWITCH_ID).ok()?.id != action.action_id {
        return None;
    }
    let [param] = action.params.as_slice() else {
        return None;
    };
    intpath_p4rt::bytes::decode_uint(&param.value)
        .ok()
        .and_then(|v| u32::try_from(v).ok())
        .filter(|&id| id != 0)
}
