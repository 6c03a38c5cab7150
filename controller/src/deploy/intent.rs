//! What a plan and a topology ask of each switch, as `sr_int` table
//! entries: pure computation, no P4Runtime I/O (that is [`super::deploy`]).

use super::DeployError;
use intpath_core::plan::Plan;
use intpath_core::switch_map::SwitchMap;
use intpath_core::wire::MAX_HOPS;
use intpath_p4rt::p4info::{Match, P4InfoError, P4InfoIndex};
use intpath_p4rt::proto::p4::v1 as p4;
use intpath_sr_int::schema::{
    GENERATOR, IPV4_FORWARD, IPV4_LPM, PUSH_ROUTE, SET_SWITCH_ID, SINK, SINK_TO_COLLECTOR,
    SINK_TO_CPU, SWITCH_CONFIG,
};
use intpath_sr_int::{label_stack, LabelStackError};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

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

/// Why an intent has no table entries.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error(transparent)]
    P4Info(#[from] P4InfoError),
    #[error("path {path}: {cause}")]
    Labels { path: u16, cause: LabelStackError },
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

/// The table entries of one intent, resolved through the P4Info.
pub fn entries(ix: &P4InfoIndex, intent: &SwitchIntent) -> Result<Vec<p4::TableEntry>, EntryError> {
    let mut v = vec![ix.default_entry(
        SWITCH_CONFIG,
        SET_SWITCH_ID,
        &[("switch_id", &intent.switch_id.to_be_bytes()[..])],
    )?];
    for r in &intent.routes {
        v.push(ix.table_entry(
            IPV4_LPM,
            &[(
                "hdr.ipv4.dst_addr",
                Match::Lpm(r.prefix.octets().to_vec(), i32::from(r.prefix_len)),
            )],
            IPV4_FORWARD,
            &[
                ("dst_mac", &r.dst_mac[..]),
                ("port", &r.port.to_be_bytes()[..]),
            ],
        )?);
    }
    for (id, labels) in &intent.generators {
        let n = u8::try_from(labels.len()).unwrap_or(u8::MAX);
        let stack = label_stack(labels).map_err(|source| EntryError::Labels {
            path: *id,
            cause: source,
        })?;
        v.push(ix.table_entry(
            GENERATOR,
            &[("hdr.sr.path_id", Match::Exact(id.to_be_bytes().to_vec()))],
            PUSH_ROUTE,
            &[("num_labels", &[n][..]), ("labels", &stack[..])],
        )?);
    }
    for (id, mode) in &intent.sinks {
        let action = match mode {
            SinkMode::Collector => SINK_TO_COLLECTOR,
            SinkMode::Cpu => SINK_TO_CPU,
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
                    admin_addr: None,
                    thrift_port: None,
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
}
