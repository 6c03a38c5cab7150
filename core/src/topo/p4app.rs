//! p4-utils' `p4app.json`: the network is its `topology` section, with
//! `switches` and `hosts` objects keyed by name and `links` as arrays
//! `[node, node, {options}?]`. Options read: `port1`/`port2` (the ports at
//! each end), `delay` (`"5ms"` or ms) and `bw` (Mbit/s); a `default` object
//! gives `delay` and `bw` for every link. The P4 program, CLI files and
//! address assignment strategy are p4-utils' business and are ignored; hosts
//! get the generators' addresses unless they give `ip`/`mac`.

use super::p4lang::{add_hosts, add_switches, HostTable, Latency};
use super::{LoadOptions, Place, TopoError, Topology, TopologyBuilder};
use serde::Deserialize;
use serde_json::Value;

pub(super) fn parse(v: Value, origin: &str, opts: &LoadOptions) -> Result<Topology, TopoError> {
    let err = |m: String| TopoError::invalid(origin, m);
    let topo = &v["topology"];
    let object = |key: &str| match &topo[key] {
        Value::Object(o) => Ok(Some(o)),
        Value::Null => Ok(None),
        _ => Err(err(format!(
            "topology.{key} must be an object keyed by name"
        ))),
    };
    let switches = object("switches")?.ok_or_else(|| err("topology has no switches".into()))?;
    let mut b = TopologyBuilder::new(origin);
    b.strict(opts.strict);
    add_switches(&mut b, switches.keys().map(String::as_str));
    if let Some(hosts) = topo.get("hosts").filter(|h| !h.is_null()) {
        let hosts =
            HostTable::deserialize(hosts).map_err(|e| err(format!("topology.hosts: {e}")))?;
        add_hosts(&mut b, origin, &hosts)?;
    }
    let default = object("default")?;
    let links = match &topo["links"] {
        Value::Array(l) => l.as_slice(),
        Value::Null => &[],
        _ => return Err(err("topology.links must be a list".into())),
    };
    for (i, l) in links.iter().enumerate() {
        let what = || format!("topology.links[{i}] {l}");
        let items = l
            .as_array()
            .filter(|a| (2..=3).contains(&a.len()))
            .ok_or_else(|| err(format!("{}: expected [node, node, {{options}}?]", what())))?;
        let name = |x: &Value| {
            x.as_str()
                .map(str::to_owned)
                .ok_or_else(|| err(format!("{}: link ends must be names", what())))
        };
        let link_opts = match items.get(2) {
            Some(Value::Object(o)) => Some(o),
            None => None,
            Some(_) => return Err(err(format!("{}: link options must be an object", what()))),
        };
        let get = |key: &str| {
            link_opts
                .and_then(|o| o.get(key))
                .or_else(|| default?.get(key))
        };
        let port = |key: &str| {
            link_opts
                .and_then(|o| o.get(key))
                .map(|p| {
                    p.as_u64()
                        .and_then(|p| u16::try_from(p).ok())
                        .ok_or_else(|| err(format!("{}: {key} must be a port number", what())))
                })
                .transpose()
        };
        let delay_ms = get("delay")
            .map(|x| {
                Latency::deserialize(x)
                    .map(|l| l.0)
                    .map_err(|e| err(format!("{}: bad delay: {e}", what())))
            })
            .transpose()?;
        let bw_mbps = get("bw")
            .map(|x| x.as_f64().ok_or_else(|| err(format!("{}: bad bw", what()))))
            .transpose()?;
        let (a, a_port) = (name(&items[0])?, port("port1")?);
        let (c, c_port) = (name(&items[1])?, port("port2")?);
        let host_port =
            |n: &str, p: Option<u16>| if switches.contains_key(n) { p } else { Some(0) };
        let d = b.link(
            a.clone(),
            host_port(&a, a_port),
            c.clone(),
            host_port(&c, c_port),
        );
        d.delay_ms = delay_ms.filter(|&d| d != 0.0);
        d.bw_mbps = bw_mbps;
        d.at = Some(Place::Index("topology.links", i));
    }
    b.build()
}
