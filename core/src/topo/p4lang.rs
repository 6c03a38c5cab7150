//! The p4lang tutorials' `topology.json`: `hosts` and `switches` are objects
//! keyed by name, `links` are arrays `[end, end, latency?, bandwidth?]`
//! where a switch end is `sN-pK` (port K) and a host end is its name.
//! Older files list hosts as an array of names and give no ports.
//!
//! Read straight into typed rows whose names borrow from the text: a
//! `serde_json::Value` tree costs an allocation per JSON node and a B-tree
//! per object, which made loading cost more per element as files grew.

use super::gen::host_addr;
use super::json::host_addresses;
use super::{LoadOptions, Place, TopoError, Topology, TopologyBuilder};
use rustc_hash::FxHashSet;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

#[derive(Deserialize)]
struct File<'a> {
    #[serde(borrow)]
    switches: Keyed<'a, IgnoredAny>,
    #[serde(borrow, default)]
    hosts: Option<Hosts<'a>>,
    #[serde(borrow, default)]
    links: Option<Vec<Link<'a>>>,
}

/// A node name, borrowed unless the text escapes a character in it.
#[derive(Deserialize)]
#[serde(transparent)]
pub(super) struct Name<'a>(#[serde(borrow)] Cow<'a, str>);

impl Name<'_> {
    pub(super) fn as_str(&self) -> &str {
        &self.0
    }
}

/// An object keyed by node name, in file order, each value read as `V`.
/// Switches are read as `Keyed<IgnoredAny>`: their values (runtime files,
/// CLI inputs) are for the tutorials' own scripts and are skipped unbuilt.
pub(super) struct Keyed<'a, V>(Vec<(Name<'a>, V)>);

impl<'de, V: Deserialize<'de>> Keyed<'de, V> {
    fn collect<M: MapAccess<'de>>(mut m: M) -> Result<Self, M::Error> {
        let mut entries = Vec::with_capacity(m.size_hint().unwrap_or(0));
        while let Some(entry) = m.next_entry()? {
            entries.push(entry);
        }
        Ok(Keyed(entries))
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(name, _)| name.as_str())
    }
}

impl<'de: 'a, 'a, V: Deserialize<'de>> Deserialize<'de> for Keyed<'a, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Visit<V> {
            type Value = Keyed<'de, V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object keyed by name")
            }
            fn visit_map<M: MapAccess<'de>>(self, m: M) -> Result<Self::Value, M::Error> {
                Keyed::collect(m)
            }
        }
        d.deserialize_map(Visit(PhantomData))
    }
}

/// A host's addresses, each optional (the generators' otherwise).
#[derive(Deserialize)]
pub(super) struct HostFields<'a> {
    #[serde(borrow, default)]
    ip: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    mac: Option<Cow<'a, str>>,
}

/// Hosts as an object keyed by name.
pub(super) type HostTable<'a> = Keyed<'a, HostFields<'a>>;

/// Hosts keyed by name, or (older files) a list of names.
enum Hosts<'a> {
    Keyed(HostTable<'a>),
    Listed(Vec<Name<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Hosts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Hosts<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("hosts as an object keyed by name or a list of names")
            }
            fn visit_map<M: MapAccess<'de>>(self, m: M) -> Result<Self::Value, M::Error> {
                Keyed::collect(m).map(Hosts::Keyed)
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<Self::Value, S::Error> {
                let mut names = Vec::with_capacity(s.size_hint().unwrap_or(0));
                while let Some(name) = s.next_element()? {
                    names.push(name);
                }
                Ok(Hosts::Listed(names))
            }
        }
        d.deserialize_any(V)
    }
}

/// `[end, end, latency?, bandwidth?]`.
struct Link<'a> {
    ends: [Name<'a>; 2],
    latency: Option<Latency>,
    bandwidth: Option<f64>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Link<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Link<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("[end, end, latency?, bandwidth?]")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<Self::Value, S::Error> {
                let a = s
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let b = s
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                let latency = s.next_element()?;
                let bandwidth = s.next_element()?;
                if s.next_element::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(5, &self));
                }
                Ok(Link {
                    ends: [a, b],
                    latency,
                    bandwidth,
                })
            }
        }
        d.deserialize_seq(V)
    }
}

/// Latency as the tutorials write it: a number of ms or a string like `"5ms"`.
pub(super) struct Latency(pub(super) f64);

impl<'de> Deserialize<'de> for Latency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Latency;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a latency in ms, as a number or a string like \"5ms\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Latency, E> {
                Ok(Latency(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Latency, E> {
                Ok(Latency(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Latency, E> {
                Ok(Latency(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Latency, E> {
                v.trim()
                    .trim_end_matches("ms")
                    .trim()
                    .parse()
                    .map(Latency)
                    .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads `text` as a p4lang file; `None` if it does not read as one
/// (a file of another format, or a broken one: [`why_not`] says which).
pub(super) fn parse(
    text: &str,
    origin: &str,
    opts: &LoadOptions,
) -> Option<Result<Topology, TopoError>> {
    let file: File = serde_json::from_str(text).ok()?;
    Some(build(file, origin, opts))
}

/// Why `text`, which has a `switches` object, does not read as a p4lang
/// file: the place (`links[3][0]`) and serde's reason, with line and column.
pub(super) fn why_not(text: &str, origin: &str) -> TopoError {
    let mut de = serde_json::Deserializer::from_str(text);
    let problem = match serde_path_to_error::deserialize::<_, File>(&mut de) {
        Err(e) => format!("{}: {}", e.path(), e.inner()),
        Ok(_) => "not a p4lang topology".to_owned(),
    };
    TopoError::invalid(origin, problem)
}

fn build(file: File, origin: &str, opts: &LoadOptions) -> Result<Topology, TopoError> {
    let err = |m: String| TopoError::invalid(origin, m);
    let mut b = TopologyBuilder::new(origin);
    b.strict(opts.strict);
    add_switches(&mut b, file.switches.names());
    let host_names: FxHashSet<&str> = match &file.hosts {
        Some(Hosts::Keyed(hosts)) => {
            add_hosts(&mut b, origin, hosts)?;
            hosts.names().collect()
        }
        Some(Hosts::Listed(names)) => {
            for (i, name) in names.iter().enumerate() {
                let (ip, mac) = host_addr(i + 1);
                b.host(name.as_str(), ip, mac);
            }
            names.iter().map(Name::as_str).collect()
        }
        None => FxHashSet::default(),
    };
    let switch_names: FxHashSet<&str> = file.switches.names().collect();
    let links = file.links.unwrap_or_default();
    b.reserve(0, 0, links.len());
    for (i, l) in links.iter().enumerate() {
        let end = |name: &Name| -> Result<(String, Option<u16>), TopoError> {
            let s = name.as_str();
            if host_names.contains(s) {
                return Ok((s.to_owned(), Some(0)));
            }
            match s.rsplit_once("-p") {
                Some((node, port)) if switch_names.contains(node) => {
                    let p = port
                        .parse()
                        .map_err(|_| err(format!("links[{i}]: bad port in {s:?}")))?;
                    Ok((node.to_owned(), Some(p)))
                }
                _ => Ok((s.to_owned(), None)),
            }
        };
        let (a, a_port) = end(&l.ends[0])?;
        let (c, c_port) = end(&l.ends[1])?;
        let d = b.link(a, a_port, c, c_port);
        d.delay_ms = l.latency.as_ref().map(|l| l.0).filter(|&d| d != 0.0);
        d.bw_mbps = l.bandwidth;
        d.at = Some(Place::Index("links", i));
    }
    b.build()
}

/// Adds hosts in natural order of their names, with the generators'
/// addresses where a host gives none. `ip` may carry a prefix length.
pub(super) fn add_hosts(
    b: &mut TopologyBuilder,
    origin: &str,
    hosts: &HostTable,
) -> Result<(), TopoError> {
    let mut list: Vec<&(Name, HostFields)> = hosts.0.iter().collect();
    list.sort_by_cached_key(|(name, _)| NaturalKey::of(name.as_str()));
    for (i, (name, h)) in list.into_iter().enumerate() {
        let (dip, dmac) = host_addr(i + 1);
        let ip =
            h.ip.as_deref()
                .map_or_else(|| dip.to_string(), str::to_owned);
        let mac = h
            .mac
            .as_deref()
            .map_or_else(|| dmac.to_string(), str::to_owned);
        let (ip, mac) = host_addresses(origin, name.as_str(), &ip, &mac)?;
        b.host(name.as_str(), ip, mac);
    }
    Ok(())
}

/// Adds the named switches in natural order: `sN` keeps id N, other names
/// get the ids after the largest.
pub(super) fn add_switches<'a>(b: &mut TopologyBuilder, names: impl Iterator<Item = &'a str>) {
    let mut names: Vec<&str> = names.collect();
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
        b.switch(*name, id);
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
