//! Turning a plan into entries on every switch, by the names agreed for
//! `sr_int.p4`, and bringing all switches there at once.
//!
//! The network-specific part (which IPv4 routes each switch needs) comes in
//! as [`Route`]s computed from the topology by the caller; everything here
//! depends only on the plan, the switch map and the P4Info. Each switch is
//! synced on its own ([`Client::sync`]), concurrently, so one unreachable
//! switch is reported by name without hiding what happened on the others.

use crate::client::{Client, ClientConfig, ClientError, Target};
use crate::p4info::{Match, P4InfoError, P4InfoIndex};
use crate::proto::p4::v1 as p4;
use intpath_core::plan::Plan;
use intpath_core::switch_map::SwitchMap;
use intpath_core::wire::MAX_HOPS;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

pub const SWITCH_CONFIG: &str = "SrIntIngress.switch_config";
pub const IPV4_LPM: &str = "SrIntIngress.ipv4_lpm";
pub const GENERATOR: &str = "SrIntIngress.generator";
pub const SINK: &str = "SrIntIngress.sink";
/// Every table a deploy owns: entries found there that the plan does not
/// imply are deleted.
pub const MANAGED_TABLES: [&str; 4] = [SWITCH_CONFIG, IPV4_LPM, GENERATOR, SINK];

/// The P4Info of `p4/sr_int.p4`, built in so that the controller needs no
/// file to talk to switches running intpath's program.
pub const SR_INT_P4INFO: &str = include_str!("../../p4/sr_int.p4info.txtpb");

/// The built-in P4Info, indexed.
pub fn sr_int_p4info() -> Result<P4InfoIndex, P4InfoError> {
    P4InfoIndex::new(crate::p4info::from_text(SR_INT_P4INFO)?)
}

/// One IPv4 forwarding entry of a switch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Route {
    pub prefix: Ipv4Addr,
    pub prefix_len: u8,
    pub port: u16,
    /// Destination MAC written on the way out (the host's MAC on the last
    /// hop; switches forward by port, so the next hop's MAC elsewhere).
    pub dst_mac: [u8; 6],
}

/// Where a path's sink hands the finished probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SinkMode {
    /// IPv4 forwarding towards the probe's destination (the collector).
    Collector,
    /// Packet-in to the controller.
    Cpu,
}

/// Everything one switch should hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchIntent {
    pub switch_id: u32,
    pub routes: Vec<Route>,
    /// path id → labels (egress ports from the generator on).
    pub generators: BTreeMap<u16, Vec<u16>>,
    pub sinks: BTreeMap<u16, SinkMode>,
}

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("path {path}: {problem}")]
    Plan { path: u16, problem: String },
    #[error("switch {0} is in the plan or topology but not in the switch map")]
    NotInMap(String),
    #[error("switch {name}: device id {id} does not fit the 32-bit INT switch id")]
    SwitchId { name: String, id: u64 },
    #[error("switch {switch}: {source}")]
    Entry {
        switch: String,
        source: Box<P4InfoError>,
    },
    #[error("{} of {} switches failed:\n  {}", .0.len(), .1, .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n  "))]
    Switches(Vec<ClientError>, usize),
}

/// The intents a plan implies: a switch id everywhere, each path's route at
/// its generator and its sink behaviour at its last switch, and the given
/// IPv4 routes. Every switch of the map gets an intent (so that a switch the
/// plan no longer uses is cleaned up).
pub fn intents(
    plan: &Plan,
    switches: &SwitchMap,
    mut routes: BTreeMap<String, Vec<Route>>,
    sink: SinkMode,
) -> Result<BTreeMap<String, SwitchIntent>, DeployError> {
    let mut out = BTreeMap::new();
    for s in &switches.switches {
        let switch_id = u32::try_from(s.device_id).map_err(|_| DeployError::SwitchId {
            name: s.name.clone(),
            id: s.device_id,
        })?;
        let mut r = routes.remove(&s.name).unwrap_or_default();
        r.sort();
        r.dedup();
        out.insert(
            s.name.clone(),
            SwitchIntent {
                switch_id,
                routes: r,
                ..Default::default()
            },
        );
    }
    if let Some(name) = routes.into_keys().next() {
        return Err(DeployError::NotInMap(name));
    }
    for path in &plan.paths {
        if path.egress_ports.len() > MAX_HOPS {
            return Err(DeployError::Plan {
                path: path.id,
                problem: format!(
                    "{} hops exceed the {MAX_HOPS} labels a probe can carry",
                    path.egress_ports.len()
                ),
            });
        }
        for name in [path.generator(), path.sink()] {
            if !out.contains_key(name) {
                return Err(DeployError::NotInMap(name.to_owned()));
            }
        }
        if let Some(g) = out.get_mut(path.generator()) {
            g.generators.insert(path.id, path.egress_ports.clone());
        }
        if let Some(s) = out.get_mut(path.sink()) {
            s.sinks.insert(path.id, sink);
        }
    }
    Ok(out)
}

/// The label stack as `push_route` takes it: 45 × 16 bits, label 0 in the
/// most significant bits, unused labels zero.
pub fn label_stack(labels: &[u16]) -> Vec<u8> {
    let mut out = vec![0u8; MAX_HOPS * 2];
    for (slot, label) in out.chunks_exact_mut(2).zip(labels) {
        slot.copy_from_slice(&label.to_be_bytes());
    }
    out
}

/// The table entries of one intent, resolved through the P4Info.
pub fn entries(
    ix: &P4InfoIndex,
    intent: &SwitchIntent,
) -> Result<Vec<p4::TableEntry>, P4InfoError> {
    let mut v = vec![ix.default_entry(
        SWITCH_CONFIG,
        "SrIntIngress.set_switch_id",
        &[("switch_id", &intent.switch_id.to_be_bytes()[..])],
    )?];
    for r in &intent.routes {
        v.push(ix.table_entry(
            IPV4_LPM,
            &[(
                "hdr.ipv4.dst_addr",
                Match::Lpm(r.prefix.octets().to_vec(), i32::from(r.prefix_len)),
            )],
            "SrIntIngress.ipv4_forward",
            &[
                ("dst_mac", &r.dst_mac[..]),
                ("port", &r.port.to_be_bytes()[..]),
            ],
        )?);
    }
    for (id, labels) in &intent.generators {
        let n = u8::try_from(labels.len()).unwrap_or(u8::MAX);
        v.push(ix.table_entry(
            GENERATOR,
            &[("hdr.sr.path_id", Match::Exact(id.to_be_bytes().to_vec()))],
            "SrIntIngress.push_route",
            &[
                ("num_labels", &[n][..]),
                ("labels", &label_stack(labels)[..]),
            ],
        )?);
    }
    for (id, mode) in &intent.sinks {
        let action = match mode {
            SinkMode::Collector => "SrIntIngress.sink_to_collector",
            SinkMode::Cpu => "SrIntIngress.sink_to_cpu",
        };
        v.push(ix.table_entry(
            SINK,
            &[("hdr.sr.path_id", Match::Exact(id.to_be_bytes().to_vec()))],
            action,
            &[],
        )?);
    }
    Ok(v)
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
}

impl Default for DeployOptions {
    fn default() -> Self {
        DeployOptions {
            dry_run: false,
            election_id: 1,
            connect_timeout: Duration::from_secs(3),
            rpc_timeout: Duration::from_secs(30),
            device_config: Vec::new(),
            replace_pipeline: false,
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
            source: Box::new(e),
        })?;
    let mut jobs = tokio::task::JoinSet::new();
    for s in &switches.switches {
        let intent = intents.get(&s.name).cloned().unwrap_or_default();
        let desired = entries(&ix, &intent).map_err(|e| DeployError::Entry {
            switch: s.name.clone(),
            source: Box::new(e),
        })?;
        let mut config = ClientConfig::new(Target {
            name: s.name.clone(),
            addr: s.grpc_addr.clone(),
            device_id: s.device_id,
        });
        config.election_id = options.election_id;
        config.connect_timeout = options.connect_timeout;
        config.rpc_timeout = options.rpc_timeout;
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
                    difference: crate::client::p4info_difference(ix.p4info(), &remote),
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

/// What `intpath switches status` shows for one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchStatus {
    pub name: String,
    pub addr: String,
    /// Why the switch could not be asked (unreachable, no answer...).
    pub error: Option<String>,
    pub arbitration: Option<crate::client::Arbitration>,
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
    let rx = client
        .read_counter("SrIntIngress.rx_port_counter", None)
        .await?;
    let tx = client
        .read_counter("SrIntEgress.tx_port_counter", None)
        .await?;
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
        .read_counter("SrIntIngress.drop_counter", None)
        .await?
        .into_iter()
        .filter(|&(_, p, _)| p > 0)
        .map(|(i, p, _)| (i, p))
        .collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use intpath_core::plan::{PlanStats, ProbePath};
    use intpath_core::switch_map::SwitchEntry;

    fn map(names: &[&str]) -> SwitchMap {
        SwitchMap {
            switches: names
                .iter()
                .enumerate()
                .map(|(i, n)| SwitchEntry {
                    name: n.to_string(),
                    grpc_addr: format!("127.0.0.1:{}", 50000 + i),
                    device_id: i as u64 + 1,
                    cpu_port: 255,
                })
                .collect(),
        }
    }

    fn plan(paths: Vec<ProbePath>) -> Plan {
        Plan {
            topology: "t".into(),
            algo: "test".into(),
            paths,
            stats: PlanStats::default(),
        }
    }

    #[test]
    fn generator_and_sink_of_each_path() {
        let p = plan(vec![ProbePath {
            id: 3,
            nodes: vec!["s1".into(), "s2".into(), "s3".into()],
            egress_ports: vec![2, 4],
        }]);
        let i = intents(
            &p,
            &map(&["s1", "s2", "s3"]),
            BTreeMap::new(),
            SinkMode::Collector,
        )
        .unwrap();
        assert_eq!(i["s1"].generators[&3], vec![2, 4]);
        assert_eq!(i["s3"].sinks[&3], SinkMode::Collector);
        assert!(i["s2"].generators.is_empty() && i["s2"].sinks.is_empty());
        assert_eq!(i["s2"].switch_id, 2);
    }

    #[test]
    fn unknown_switches_and_long_paths_are_refused() {
        let p = plan(vec![ProbePath {
            id: 1,
            nodes: vec!["s1".into(), "s9".into()],
            egress_ports: vec![1],
        }]);
        let e = intents(&p, &map(&["s1"]), BTreeMap::new(), SinkMode::Cpu).unwrap_err();
        assert_eq!(
            e.to_string(),
            "switch s9 is in the plan or topology but not in the switch map"
        );
        let long = plan(vec![ProbePath {
            id: 2,
            nodes: vec!["s1".into(); 47],
            egress_ports: vec![1; 46],
        }]);
        let e = intents(&long, &map(&["s1"]), BTreeMap::new(), SinkMode::Cpu).unwrap_err();
        assert!(e.to_string().starts_with("path 2: 46 hops exceed"), "{e}");
    }

    #[test]
    fn built_in_p4info_has_every_managed_table() {
        let ix = sr_int_p4info().unwrap();
        for t in MANAGED_TABLES {
            ix.table(t).unwrap();
        }
    }

    #[test]
    fn label_stack_reads_left_to_right() {
        let s = label_stack(&[2, 3, 0x1ff]);
        assert_eq!(s.len(), 90);
        assert_eq!(&s[..6], &[0, 2, 0, 3, 1, 0xff]);
        assert!(s[6..].iter().all(|&b| b == 0));
    }
}
