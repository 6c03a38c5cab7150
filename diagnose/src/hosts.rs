//! Which host recorded a span. With a topology, a span is placed on one of
//! its hosts; without one (a diagnosis from traces alone), every distinct
//! address the spans name is a host of its own.
//!
//! The evidence, strongest first: `--host-map` (IP, host name or service
//! name → host), the recording process's own addresses (resource `host.ip`
//! and the others of [`crate::spans::Endpoint`]), the address its peer saw
//! it at (a server span's `client.address`, a client span's
//! `server.address`), and last its `host.name`, which a host detector sets
//! to the machine's name whatever namespace the process runs in. Never
//! guessed: a span nothing places is a reject.

use crate::spans::Span;
use intpath_core::topo::Topology;
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum HostMapError {
    #[error("{0}: cannot read host map: {1}")]
    Read(String, std::io::Error),
    #[error("{0}: host map is not a JSON object of strings: {1}")]
    Parse(String, serde_json::Error),
    #[error("host map: {key:?} maps to {host:?}, which is not a host of the topology")]
    UnknownHost { key: String, host: String },
}

/// The hosts of one diagnosis, and how spans are placed on them.
#[derive(Debug, Clone)]
pub struct Hosts {
    names: Vec<String>,
    /// A topology's hosts are all there is; otherwise hosts are added as
    /// spans name them.
    fixed: bool,
    by_ip: HashMap<IpAddr, u16>,
    by_name: HashMap<String, u16>,
    /// `--host-map`: user keys → host.
    by_key: HashMap<String, u16>,
}

impl Hosts {
    /// The topology's hosts; `map` (IP, host name or service name → host
    /// name) must name hosts of the topology.
    pub fn of_topology(
        topo: &Topology,
        map: &HashMap<String, String>,
    ) -> Result<Self, HostMapError> {
        let mut h = Hosts {
            names: topo.hosts().iter().map(|h| h.name.clone()).collect(),
            fixed: true,
            by_ip: topo
                .hosts()
                .iter()
                .enumerate()
                .map(|(i, h)| (IpAddr::V4(h.ip), i as u16))
                .collect(),
            by_name: HashMap::new(),
            by_key: HashMap::new(),
        };
        h.by_name = h
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u16))
            .collect();
        for (key, host) in map {
            let i = h
                .by_name
                .get(host)
                .copied()
                .ok_or_else(|| HostMapError::UnknownHost {
                    key: key.clone(),
                    host: host.clone(),
                })?;
            h.by_key.insert(key.clone(), i);
        }
        Ok(h)
    }

    /// No topology: hosts are the addresses (or, failing those, the host
    /// names) the spans give, and the names `map` assigns.
    pub fn discovered(map: &HashMap<String, String>) -> Self {
        let mut h = Hosts {
            names: Vec::new(),
            fixed: false,
            by_ip: HashMap::new(),
            by_name: HashMap::new(),
            by_key: HashMap::new(),
        };
        for (key, host) in map {
            let i = h.named(host);
            h.by_key.insert(key.clone(), i);
        }
        h
    }

    pub fn load_map(path: &Path) -> Result<HashMap<String, String>, HostMapError> {
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| HostMapError::Read(name.clone(), e))?;
        serde_json::from_str(&text).map_err(|e| HostMapError::Parse(name, e))
    }

    /// Host names, indexed by the ids [`Hosts::place`] returns.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether the hosts are a topology's.
    pub fn is_topology(&self) -> bool {
        self.fixed
    }

    fn named(&mut self, name: &str) -> u16 {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        let i = self.names.len() as u16;
        self.names.push(name.to_owned());
        self.by_name.insert(name.to_owned(), i);
        i
    }

    fn at(&mut self, ip: IpAddr) -> Option<u16> {
        if let Some(&i) = self.by_ip.get(&ip) {
            return Some(i);
        }
        if self.fixed {
            return None;
        }
        let i = self.named(&ip.to_string());
        self.by_ip.insert(ip, i);
        Some(i)
    }

    /// The host `s` was recorded on; `seen_at` is the address its RPC's
    /// other span says this end had.
    pub fn place(&mut self, s: &Span, seen_at: Option<IpAddr>) -> Option<u16> {
        let e = &s.endpoint;
        // A peer that saw 127.0.0.1 (or ::1) saw only that both ends share
        // a machine: it is every local client's source address unless the
        // client binds one of its own. Without a topology the process's own
        // host.name is the better name for that machine, or a process would
        // sit on one host as a caller and on another as a callee.
        let seen_at =
            seen_at.filter(|&ip| self.fixed || !is_default_loopback(ip) || e.hostname.is_none());
        let ip_keys = e.ips.iter().chain(seen_at.as_ref()).map(IpAddr::to_string);
        let keys = ip_keys
            .chain(e.hostname.clone())
            .chain(std::iter::once(s.service.clone()));
        for k in keys {
            if let Some(&i) = self.by_key.get(&k) {
                return Some(i);
            }
        }
        for &ip in e.ips.iter().chain(seen_at.as_ref()) {
            if let Some(i) = self.at(ip) {
                return Some(i);
            }
        }
        match (e.hostname.as_deref(), self.fixed) {
            (Some(name), true) => self.by_name.get(name).copied(),
            (Some(name), false) => Some(self.named(name)),
            // Nothing says where it ran: an SDK's default resource names no
            // host, and a gRPC client span names no server. Without a
            // topology the process is a host of its own, named as its
            // service, so that its calls are still diagnosed.
            (None, false) if !s.service.is_empty() => Some(self.named(&s.service)),
            (None, _) => None,
        }
    }

    /// The host of client span `c`, as [`Hosts::place`] gives it, except
    /// where `c` names no address of its own and its callee saw it at
    /// 127.0.0.1 or nowhere: then the process is where its server span
    /// `within` (the one the call was made under) was reached. One
    /// process on a machine of many loopback addresses (services on
    /// 127.0.4.1, 127.0.4.2, …, calling out from 127.0.0.1) would
    /// otherwise sit on one host as a callee and on another as a caller.
    pub fn place_caller(
        &mut self,
        c: &Span,
        seen_at: Option<IpAddr>,
        within: Option<&Span>,
    ) -> Option<u16> {
        let reached_at = within.and_then(|w| w.endpoint.ips.first().copied());
        let seen_at = match (c.endpoint.ips.is_empty(), seen_at) {
            (true, None) => reached_at,
            (true, Some(ip)) if is_default_loopback(ip) => reached_at.or(seen_at),
            _ => seen_at,
        };
        self.place(c, seen_at)
    }

    /// Why `s` could not be placed, for the reject table.
    pub fn why_unplaced(&self, s: &Span, seen_at: Option<IpAddr>) -> String {
        let e = &s.endpoint;
        let mut told = Vec::new();
        if !e.ips.is_empty() {
            let ips: Vec<String> = e.ips.iter().map(IpAddr::to_string).collect();
            told.push(format!("addresses {}", ips.join(", ")));
        }
        if let Some(ip) = seen_at {
            told.push(format!("its peer saw {ip}"));
        }
        if let Some(h) = &e.hostname {
            told.push(format!("host.name {h:?}"));
        }
        let told = match told.is_empty() {
            true => "no address or host name".to_owned(),
            false => format!("{}, none a host of the topology", told.join("; ")),
        };
        format!(
            "{} ({told}; looked for {}; or pass --host-map)",
            s.service,
            crate::spans::keys_looked_for()
        )
    }

    /// The host at address `ip`, by the host map or the address itself.
    pub fn place_ip(&mut self, ip: IpAddr) -> Option<u16> {
        match self.by_key.get(&ip.to_string()) {
            Some(&i) => Some(i),
            None => self.at(ip),
        }
    }
}

/// The address a local connection comes from when its client binds none.
fn is_default_loopback(ip: IpAddr) -> bool {
    ip == IpAddr::from([127, 0, 0, 1]) || ip == IpAddr::from(std::net::Ipv6Addr::LOCALHOST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spans::{Endpoint, Kind};

    fn span(service: &str, endpoint: Endpoint) -> Span {
        Span {
            trace_id: "t".into(),
            span_id: "s".into(),
            parent_id: None,
            service: service.into(),
            kind: Kind::Server,
            start_ns: 0,
            end_ns: 1,
            endpoint,
            shared: false,
            error: false,
        }
    }

    #[test]
    fn a_process_nothing_places_is_a_host_of_its_own_without_a_topology() {
        let bare = span("pricing", Endpoint::default());
        let mut hosts = Hosts::discovered(&HashMap::new());
        let i = hosts.place(&bare, None).unwrap();
        assert_eq!(hosts.names()[i as usize], "pricing");
        // An address still wins, and a topology's hosts are all there is.
        let seen = hosts.place(&bare, Some("10.0.0.6".parse().unwrap()));
        assert_eq!(
            seen.map(|i| hosts.names()[i as usize].as_str()),
            Some("10.0.0.6")
        );
        let topo = Topology::load("fattree:k=4").unwrap();
        let mut fixed = Hosts::of_topology(&topo, &HashMap::new()).unwrap();
        assert_eq!(fixed.place(&bare, None), None);
    }

    #[test]
    fn a_loopback_peer_does_not_outrank_the_processs_own_host_name() {
        let named = span(
            "gateway",
            Endpoint {
                hostname: Some("vm".into()),
                ..Default::default()
            },
        );
        let mut hosts = Hosts::discovered(&HashMap::new());
        let name = |hosts: &Hosts, i: Option<u16>| hosts.names()[i.unwrap() as usize].clone();
        let lo = hosts.place(&named, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(name(&hosts, lo), "vm");
        let far = hosts.place(&named, Some("10.0.0.3".parse().unwrap()));
        assert_eq!(name(&hosts, far), "10.0.0.3");
        // A client that bound an address of its own is told apart by it.
        let bound = hosts.place(&named, Some("127.0.2.2".parse().unwrap()));
        assert_eq!(name(&hosts, bound), "127.0.2.2");
        let bare = span("cart", Endpoint::default());
        let lo = hosts.place(&bare, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(name(&hosts, lo), "127.0.0.1");
    }

    #[test]
    fn a_caller_seen_at_127_0_0_1_is_where_its_own_server_was_reached() {
        let at = |ip: &str| Endpoint {
            ips: vec![ip.parse().unwrap()],
            hostname: Some("vm".into()),
            ..Default::default()
        };
        let server = span("cart", at("127.0.4.3"));
        let mut call = span(
            "cart",
            Endpoint {
                hostname: Some("vm".into()),
                ..Default::default()
            },
        );
        call.kind = Kind::Client;
        let mut hosts = Hosts::discovered(&HashMap::new());
        let as_callee = hosts.place(&server, None);
        let lo = Some("127.0.0.1".parse().unwrap());
        assert_eq!(hosts.place_caller(&call, lo, Some(&server)), as_callee);
        assert_eq!(hosts.place_caller(&call, None, Some(&server)), as_callee);
        // Without its server span it is the machine's host name, as
        // before; an address the callee saw, or one of its own, wins.
        let vm = hosts.place_caller(&call, lo, None);
        assert_eq!(hosts.names()[vm.unwrap() as usize], "vm");
        let bound = Some("127.0.2.2".parse().unwrap());
        let b = hosts.place_caller(&call, bound, Some(&server));
        assert_eq!(hosts.names()[b.unwrap() as usize], "127.0.2.2");
        let own = span("cart", at("10.0.0.9"));
        let o = hosts.place_caller(&own, lo, Some(&server));
        assert_eq!(hosts.names()[o.unwrap() as usize], "10.0.0.9");
    }

    #[test]
    fn addresses_beat_a_hostname_every_mininet_host_shares() {
        let topo = Topology::load("fattree:k=4").unwrap();
        let mut hosts = Hosts::of_topology(&topo, &HashMap::new()).unwrap();
        let s = span(
            "catalog",
            Endpoint {
                hostname: Some("debian".into()),
                ..Default::default()
            },
        );
        assert_eq!(hosts.place(&s, None), None);
        assert!(hosts
            .why_unplaced(&s, None)
            .contains("host.name \"debian\""));
        // The caller's client span says where it sent the request.
        let h3 = hosts.place(&s, Some("10.0.0.3".parse().unwrap()));
        assert_eq!(h3.map(|i| hosts.names()[i as usize].as_str()), Some("h3"));
        // A host name that is a topology host's places it.
        let named = span(
            "x",
            Endpoint {
                hostname: Some("h7".into()),
                ..Default::default()
            },
        );
        assert_eq!(hosts.place(&named, None), Some(6));
    }

    #[test]
    fn without_a_topology_each_address_is_a_host() {
        let map = HashMap::from([("auth".to_string(), "edge".to_string())]);
        let mut hosts = Hosts::discovered(&map);
        let lo = span("catalog", Endpoint::default());
        let a = hosts
            .place(&lo, Some("127.0.0.1".parse().unwrap()))
            .unwrap();
        let b = hosts
            .place(
                &span("cart", Endpoint::default()),
                Some("127.0.0.1".parse().unwrap()),
            )
            .unwrap();
        assert_eq!(a, b);
        let edge = hosts
            .place(&span("auth", Endpoint::default()), None)
            .unwrap();
        assert_eq!(hosts.names()[edge as usize], "edge");
        assert_eq!(hosts.names()[a as usize], "127.0.0.1");
    }
}
