//! The p4lang tutorials' `topology.json`: `hosts` and `switches` are objects
//! keyed by name, `links` are arrays `[end, end, latency?, bandwidth?]`
//! where a switch end is `sN-pK` (port K) and a host end is its name.
//! Older files list hosts as an array of names and give no ports.

use super::gen::host_addr;
use super::json::host_addresses;
use super::{LoadOptions, Place, TopoError, Topology, TopologyBuilder};
use rustc_hash::FxHashSet;
use serde_json::Value;

pub(super) fn parse(v: Value, origin: &str, opts: &LoadOptions) -> Result<Topology, TopoError> {
    let err = |m: String| TopoError::invalid(origin, m);
    let switches = v["switches"].as_object().expect("checked by the caller");
    let mut b = TopologyBuilder::new(origin);
    b.strict(opts.strict);
    add_switches(&mut b, switches.keys());

    let mut host_names: Vec<String> = Vec::new();
    match &v["hosts"] {
        Value::Object(hosts) => host_names = add_hosts(&mut b, origin, hosts)?,
        Value::Array(hosts) => {
            for (i, h) in hosts.iter().enumerate() {
                let name = h
                    .as_str()
                    .ok_or_else(|| err(format!("hosts[{i}] is not a name")))?;
                let (ip, mac) = host_addr(i + 1);
                b.host(name, ip, mac);
                host_names.push(name.to_owned());
            }
        }
        Value::Null => {}
        _ => return Err(err("hosts must be an object or a list".into())),
    }

    let host_names: FxHashSet<&str> = host_names.iter().map(String::as_str).collect();
    // serde_json's object is a B-tree: a lookup per link end would make
    // loading O(n log n) with a cache miss per level.
    let switch_names: FxHashSet<&str> = switches.keys().map(String::as_str).collect();
    let links = match &v["links"] {
        Value::Array(l) => l.as_slice(),
        Value::Null => &[],
        _ => return Err(err("links must be a list".into())),
    };
    for (i, l) in links.iter().enumerate() {
        let what = || format!("link #{} {l}", i + 1);
        let items = l
            .as_array()
            .filter(|a| (2..=4).contains(&a.len()))
            .ok_or_else(|| {
                err(format!(
                    "{}: expected [end, end, latency?, bandwidth?]",
                    what()
                ))
            })?;
        let end = |x: &Value| -> Result<(String, Option<u16>), TopoError> {
            let s = x
                .as_str()
                .ok_or_else(|| err(format!("{}: link ends must be strings", what())))?;
            if host_names.contains(s) {
                return Ok((s.to_owned(), Some(0)));
            }
            match s.rsplit_once("-p") {
                Some((node, port)) if switch_names.contains(node) => {
                    let p = port
                        .parse()
                        .map_err(|_| err(format!("{}: bad port in {s:?}", what())))?;
                    Ok((node.to_owned(), Some(p)))
                }
                _ => Ok((s.to_owned(), None)),
            }
        };
        let (a, ap) = end(&items[0])?;
        let (bn, bp) = end(&items[1])?;
        let delay_ms = items
            .get(2)
            .map(|x| latency_ms(x).ok_or_else(|| err(format!("{}: bad latency", what()))))
            .transpose()?;
        let bw_mbps = items
            .get(3)
            .map(|x| {
                x.as_f64()
                    .ok_or_else(|| err(format!("{}: bad bandwidth", what())))
            })
            .transpose()?;
        let d = b.link(a, ap, bn, bp);
        d.delay_ms = delay_ms.filter(|&d| d != 0.0);
        d.bw_mbps = bw_mbps;
        d.at = Some(Place::Index("links", i));
    }
    b.build()
}

/// Adds hosts given as an object keyed by name, in natural order; `ip`
/// (with or without a prefix length) and `mac` are optional strings, the
/// generators' addresses otherwise. Returns the names.
pub(super) fn add_hosts(
    b: &mut TopologyBuilder,
    origin: &str,
    hosts: &serde_json::Map<String, Value>,
) -> Result<Vec<String>, TopoError> {
    let err = |m: String| TopoError::invalid(origin, m);
    let mut list: Vec<(&String, &Value)> = hosts.iter().collect();
    list.sort_by_cached_key(|(name, _)| NaturalKey::of(name));
    let mut names = Vec::with_capacity(list.len());
    for (i, (name, h)) in list.into_iter().enumerate() {
        let (dip, dmac) = host_addr(i + 1);
        let field = |key: &str| -> Result<Option<&str>, TopoError> {
            match h.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(err(format!("host {name:?}: {key} must be a string"))),
            }
        };
        let ip = field("ip")?.map_or(dip.to_string(), str::to_owned);
        let mac = field("mac")?.map_or(dmac.to_string(), str::to_owned);
        let (ip, mac) = host_addresses(origin, name, &ip, &mac)?;
        b.host(name.as_str(), ip, mac);
        names.push(name.clone());
    }
    Ok(names)
}

/// Adds the named switches in natural order: `sN` keeps id N, other names
/// get the ids after the largest.
pub(super) fn add_switches<'a>(b: &mut TopologyBuilder, names: impl Iterator<Item = &'a String>) {
    let mut names: Vec<&String> = names.collect();
    names.sort_by_cached_key(|name| NaturalKey::of(name));
    let mut used = FxHashSet::default();
    let wanted: Vec<Option<u32>> = names
        .iter()
        .map(|n| {
            n.strip_prefix('s')
                .and_then(|d| d.parse::<u32>().ok())
                .filter(|&id| id >= 1 && used.insert(id))
        })
        .collect();
    let mut next = used.iter().max().copied().unwrap_or(0);
    for (name, id) in names.iter().zip(wanted) {
        let id = id.unwrap_or_else(|| {
            next += 1;
            next
        });
        b.switch(name.as_str(), id);
    }
}

/// Latency as the tutorials write it: a number of ms or a string like `"5ms"`.
pub(super) fn latency_ms(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().trim_end_matches("ms").trim().parse().ok(),
        _ => None,
    }
}

/// Sorts `s2` before `s10`: by the name's stem, then its trailing number,
/// then the name itself (`s01` and `s1` differ).
///
/// Computed once per name and compared without following a pointer in the
/// common case: a short stem is held inline, so sorting 10^5 names does not
/// miss the cache at every comparison.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct NaturalKey<'a> {
    /// The stem's first bytes, zero-padded.
    head: [u8; 16],
    /// The rest of a stem longer than `head`, else empty.
    tail: &'a [u8],
    number: u64,
    name: &'a str,
}

impl<'a> NaturalKey<'a> {
    fn of(name: &'a str) -> Self {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (stem, num) = name.split_at(name.len() - digits);
        let mut head = [0u8; 16];
        let n = stem.len().min(head.len());
        head[..n].copy_from_slice(&stem.as_bytes()[..n]);
        NaturalKey {
            head,
            tail: &stem.as_bytes()[n..],
            number: num.parse().unwrap_or(0),
            name,
        }
    }
}
