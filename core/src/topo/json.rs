//! Our JSON topology format, which `intpath topo export --format json`
//! writes and the Mininet launcher reads (documented in
//! `topologies/README.md`), and the entry point for JSON files of either
//! format.

use super::{p4app, p4lang, LoadOptions, Place, TopoError, Topology, TopologyBuilder};
use crate::wire::MacAddr;
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

#[derive(Serialize, Deserialize)]
struct File {
    switches: Vec<SwitchJson>,
    #[serde(default)]
    hosts: Vec<HostJson>,
    #[serde(default)]
    links: Vec<LinkJson>,
}

#[derive(Serialize, Deserialize)]
struct SwitchJson {
    name: String,
    id: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct HostJson {
    name: String,
    ip: String,
    mac: String,
    /// Redundant with the host's link; lets readers skip the link list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    switch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    port: Option<u16>,
}

#[derive(Serialize, Deserialize)]
struct LinkJson {
    a: String,
    a_port: Option<u16>,
    b: String,
    b_port: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bw_mbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    delay_ms: Option<f64>,
}

/// Reads our format, the p4lang one (`switches` is an object) or p4-utils'
/// `p4app.json` (a `topology` section).
pub(super) fn parse_any(
    text: &str,
    origin: &str,
    opts: &LoadOptions,
) -> Result<Topology, TopoError> {
    // Ours straight into typed structs: going through a `Value` tree first
    // costs an allocation per JSON node, and freeing them all leaves the heap
    // fragmented, which made planning an exported fat tree (k=48) 3-5x
    // slower than planning the same generated one.
    let ours = match serde_json::from_str::<File>(text) {
        Ok(file) => return build(file, origin, opts),
        Err(e) => e,
    };
    if let Some(topo) = p4lang::parse(text, origin, opts) {
        return topo;
    }
    // Neither reads: say why in the terms of the format the file looks like.
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| TopoError::invalid(origin, format!("not valid JSON: {e}")))?;
    if value.get("switches").is_some_and(|s| s.is_object()) {
        return Err(p4lang::why_not(text, origin));
    }
    if value.get("topology").is_some_and(|s| s.is_object()) {
        return p4app::parse(value, origin, opts);
    }
    Err(TopoError::invalid(
        origin,
        format!("not an intpath topology: {ours}"),
    ))
}

fn build(file: File, origin: &str, opts: &LoadOptions) -> Result<Topology, TopoError> {
    let mut b = TopologyBuilder::new(origin);
    b.strict(opts.strict);
    b.reserve(file.switches.len(), file.hosts.len(), 0);
    for s in file.switches {
        b.labeled_switch(s.name, s.id, s.label);
    }
    let mut declared = Vec::new();
    for h in &file.hosts {
        let (ip, mac) = host_addresses(origin, &h.name, &h.ip, &h.mac)?;
        b.host(h.name.clone(), ip, mac);
        if let Some(sw) = &h.switch {
            declared.push((h.name.clone(), sw.clone(), h.port));
        }
    }
    // A host whose attachment is only given by its own fields gets a link.
    let declared_hosts: FxHashSet<&str> = declared.iter().map(|d| d.0.as_str()).collect();
    let mut linked = FxHashSet::default();
    if !declared_hosts.is_empty() {
        for l in &file.links {
            for end in [l.a.as_str(), l.b.as_str()] {
                if let Some(&host) = declared_hosts.get(end) {
                    linked.insert(host);
                }
            }
        }
    }
    b.reserve(0, 0, file.links.len() + declared.len());
    for (i, l) in file.links.into_iter().enumerate() {
        let d = b.link(l.a, l.a_port, l.b, l.b_port);
        d.bw_mbps = l.bw_mbps;
        d.delay_ms = l.delay_ms;
        d.at = Some(Place::Index("links", i));
    }
    for (host, sw, port) in &declared {
        if !linked.contains(host.as_str()) {
            b.link(host.clone(), Some(0), sw.clone(), *port);
        }
    }
    let t = b.build()?;
    for (host, sw, port) in declared {
        let h = t.host(&host).expect("built from this list");
        if h.switch != sw || port.is_some_and(|p| p != h.port) {
            return Err(TopoError::invalid(
                origin,
                format!(
                    "host {host:?} says it is on {sw}:{}, but its link attaches it to {}:{}",
                    port.map_or("?".to_string(), |p| p.to_string()),
                    h.switch,
                    h.port
                ),
            ));
        }
    }
    Ok(t)
}

/// Parses a host's addresses; an IP may carry a prefix length (`/24`).
pub(super) fn host_addresses(
    origin: &str,
    host: &str,
    ip: &str,
    mac: &str,
) -> Result<(Ipv4Addr, MacAddr), TopoError> {
    let bare = ip.split_once('/').map_or(ip, |(a, _)| a);
    let ip = bare.parse().map_err(|_| {
        TopoError::invalid(origin, format!("host {host:?}: bad IPv4 address {ip:?}"))
    })?;
    let mac = mac.parse().map_err(|_| {
        TopoError::invalid(origin, format!("host {host:?}: bad MAC address {mac:?}"))
    })?;
    Ok((ip, mac))
}

pub(super) fn write(t: &Topology) -> String {
    let file = File {
        switches: t
            .switches()
            .iter()
            .map(|s| SwitchJson {
                name: s.name.clone(),
                id: s.id,
                label: s.label.clone(),
            })
            .collect(),
        hosts: t
            .hosts()
            .iter()
            .map(|h| HostJson {
                name: h.name.clone(),
                ip: h.ip.to_string(),
                mac: h.mac.to_string(),
                switch: Some(h.switch.clone()),
                port: Some(h.port),
            })
            .collect(),
        links: t
            .links()
            .iter()
            .map(|l| LinkJson {
                a: l.a.clone(),
                a_port: Some(l.a_port),
                b: l.b.clone(),
                b_port: Some(l.b_port),
                bw_mbps: l.bw_mbps,
                delay_ms: l.delay_ms,
            })
            .collect(),
    };
    let mut out = serde_json::to_string_pretty(&file).expect("plain data serializes");
    out.push('\n');
    out
}
