//! Topology generators: `fattree:k=K`, `leafspine:spines=S,leaves=L[,hosts=H]`,
//! `random:n=N,m=M[,odd=O][,seed=S][,hosts=H]` and `paper-fig4`.
//!
//! Generated names, ids, ports and addresses are deterministic: switch `sN`
//! has id N, host `hN` (N from 1) has the N-th address of [`host_addr`].

mod fabric;
mod paper;
mod random;
mod spec;

use fabric::{fattree, leafspine};
use paper::paper_fig4;
use random::random;
use spec::Params;

use super::{TopoError, Topology, TopologyBuilder};
use crate::wire::MacAddr;
use std::net::Ipv4Addr;

/// The generators' names.
const KNOWN: [&str; 4] = ["fattree", "leafspine", "random", "paper-fig4"];

/// The generators as a user writes them, for error messages.
pub(super) const USAGE: &str =
    "fattree:k=K, leafspine:spines=S,leaves=L[,hosts=H], random:n=N,m=M[,odd=O][,seed=S][,hosts=H], paper-fig4";

/// Whether `spec` reads as a generator expression rather than a path: a
/// name, `:`, then `key=value`s (a misspelt generator, when no such file).
pub(super) fn looks_like(spec: &str) -> bool {
    match spec.split_once(':') {
        Some((name, args)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && args.contains('=')
                && !args.contains('/')
        }
        None => false,
    }
}

/// Runs the generator `spec` names; `None` if `spec` is not a generator
/// expression (then it is a file path).
pub(super) fn generate(spec: &str) -> Result<Option<Topology>, TopoError> {
    let (name, args) = spec.split_once(':').unwrap_or((spec, ""));
    if !KNOWN.contains(&name) {
        return Ok(None);
    }
    let mut p = Params::parse(spec, args)?;
    let t = match name {
        "fattree" => fattree(spec, p.req("k")?),
        "leafspine" => leafspine(
            spec,
            p.req("spines")?,
            p.req("leaves")?,
            p.opt("hosts")?.unwrap_or(1),
        ),
        "random" => random(
            spec,
            p.req("n")?,
            p.req("m")?,
            p.opt("odd")?,
            p.opt("seed")?.unwrap_or(1),
            p.opt("hosts")?.unwrap_or(0),
        ),
        _ => paper_fig4(spec),
    }?;
    p.finish()?;
    Ok(Some(t))
}

/// The address of the `n`-th generated host (from 1): 10.0.x.y with y in
/// 1..=254, continuing into 10.1.0.1 after 10.0.255.254. The MAC is
/// `00:00` followed by the IPv4 address, so either identifies the host.
pub fn host_addr(n: usize) -> (Ipv4Addr, MacAddr) {
    let i = n.saturating_sub(1);
    let y = (i % 254 + 1) as u8;
    let x = i / 254;
    let ip = Ipv4Addr::new(10, (x >> 8) as u8, x as u8, y);
    let o = ip.octets();
    (ip, MacAddr([0, 0, o[0], o[1], o[2], o[3]]))
}

/// Adds switches `s1..=sN` with ids 1..=N.
fn add_switches(b: &mut TopologyBuilder, n: usize) {
    for i in 1..=n {
        b.switch(format!("s{i}"), i as u32);
    }
}

/// Adds the next host `hN` on `switch`'s `port`.
fn add_host(b: &mut TopologyBuilder, switch: usize, port: Option<u16>) {
    let n = b.host_count() + 1;
    let (ip, mac) = host_addr(n);
    b.host(format!("h{n}"), ip, mac);
    b.link(format!("h{n}"), Some(0), format!("s{switch}"), port);
}

fn too_big(spec: &str, what: &str) -> TopoError {
    TopoError::invalid(spec, format!("{what} is too large"))
}

/// Port number `p` checked to fit the wire (16 bits).
fn port(spec: &str, p: usize) -> Result<u16, TopoError> {
    u16::try_from(p).map_err(|_| too_big(spec, "port count"))
}
