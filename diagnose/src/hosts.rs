//! Which topology host recorded a span: from `--host-map` (IP, host name or
//! service name → topology host) first, then the span's IP against the
//! topology's host addresses. Never guessed: no match is a reject.

use crate::spans::Span;
use intpath_core::topo::Topology;
use std::collections::HashMap;
use std::net::Ipv4Addr;
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

/// Resolves spans to indices into `Topology::hosts()`.
#[derive(Debug, Clone)]
pub struct HostResolver {
    by_ip: HashMap<Ipv4Addr, u16>,
    by_key: HashMap<String, u16>,
}

impl HostResolver {
    /// `map`: user keys (IP, host name or service name) → topology host name.
    pub fn new(topo: &Topology, map: &HashMap<String, String>) -> Result<Self, HostMapError> {
        let index: HashMap<&str, u16> = topo
            .hosts()
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.as_str(), i as u16))
            .collect();
        let by_ip = topo
            .hosts()
            .iter()
            .enumerate()
            .map(|(i, h)| (h.ip, i as u16))
            .collect();
        let mut by_key = HashMap::new();
        for (key, host) in map {
            let i = index
                .get(host.as_str())
                .ok_or_else(|| HostMapError::UnknownHost {
                    key: key.clone(),
                    host: host.clone(),
                })?;
            by_key.insert(key.clone(), *i);
        }
        Ok(HostResolver { by_ip, by_key })
    }

    pub fn load_map(path: &Path) -> Result<HashMap<String, String>, HostMapError> {
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| HostMapError::Read(name.clone(), e))?;
        serde_json::from_str(&text).map_err(|e| HostMapError::Parse(name, e))
    }

    /// The host a span was recorded on, if the map or an address says so.
    pub fn host_of(&self, s: &Span) -> Option<u16> {
        let ip = s.ip.map(|ip| ip.to_string());
        let by_key = [
            ip.as_deref(),
            s.hostname.as_deref(),
            Some(s.service.as_str()),
        ]
        .into_iter()
        .flatten()
        .find_map(|k| self.by_key.get(k).copied());
        by_key.or_else(|| self.by_ip.get(&s.ip?).copied())
    }
}
