//! Topology generators: `fattree:k=K`, `leafspine:spines=S,leaves=L[,hosts=H]`,
//! `random:n=N,m=M[,odd=O][,seed=S][,hosts=H]` and `paper-fig4`.
//!
//! Generated names, ids, ports and addresses are deterministic: switch `sN`
//! has id N, host `hN` (N from 1) has the N-th address of [`host_addr`].

use super::{TopoError, Topology, TopologyBuilder};
use crate::wire::MacAddr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet};
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

/// `key=value` pairs of a generator expression, checked to be all used.
struct Params<'a> {
    spec: &'a str,
    values: HashMap<&'a str, u64>,
}

impl<'a> Params<'a> {
    fn parse(spec: &'a str, args: &'a str) -> Result<Self, TopoError> {
        let mut values = HashMap::new();
        for kv in args.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                TopoError::invalid(spec, format!("parameter {kv:?} is not key=value"))
            })?;
            let v = v.trim().parse().map_err(|_| {
                TopoError::invalid(spec, format!("parameter {k}: {v:?} is not a whole number"))
            })?;
            if values.insert(k.trim(), v).is_some() {
                return Err(TopoError::invalid(
                    spec,
                    format!("parameter {k} given twice"),
                ));
            }
        }
        Ok(Params { spec, values })
    }

    fn opt(&mut self, key: &str) -> Result<Option<usize>, TopoError> {
        self.values
            .remove(key)
            .map(|v| {
                usize::try_from(v)
                    .map_err(|_| TopoError::invalid(self.spec, format!("{key}={v} is too large")))
            })
            .transpose()
    }

    fn req(&mut self, key: &str) -> Result<usize, TopoError> {
        self.opt(key)?
            .ok_or_else(|| TopoError::invalid(self.spec, format!("missing parameter {key}=")))
    }

    fn finish(self) -> Result<(), TopoError> {
        match self.values.keys().next() {
            Some(k) => Err(TopoError::invalid(
                self.spec,
                format!("unknown parameter {k:?}"),
            )),
            None => Ok(()),
        }
    }
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

/// The k-ary fat tree: switches s1.. are the (k/2)^2 cores, then pod by pod
/// the k/2 aggregation and k/2 edge switches. Edge switches use ports
/// 1..=k/2 for hosts and k/2+1..=k upwards; aggregation switches 1..=k/2
/// down, k/2+1..=k up; core port p+1 leads to pod p.
fn fattree(spec: &str, k: usize) -> Result<Topology, TopoError> {
    if k < 2 || !k.is_multiple_of(2) || k > 256 {
        return Err(TopoError::invalid(spec, "k must be even, from 2 to 256"));
    }
    let h = k / 2;
    let cores = h * h;
    let mut b = TopologyBuilder::new(spec);
    add_switches(&mut b, cores + k * k);
    let agg = |pod: usize, a: usize| cores + pod * k + a + 1;
    let edge = |pod: usize, e: usize| cores + pod * k + h + e + 1;
    for pod in 0..k {
        for e in 0..h {
            for a in 0..h {
                b.link(
                    format!("s{}", edge(pod, e)),
                    Some(port(spec, h + a + 1)?),
                    format!("s{}", agg(pod, a)),
                    Some(port(spec, e + 1)?),
                );
            }
        }
        for a in 0..h {
            for c in 0..h {
                b.link(
                    format!("s{}", agg(pod, a)),
                    Some(port(spec, h + c + 1)?),
                    format!("s{}", a * h + c + 1),
                    Some(port(spec, pod + 1)?),
                );
            }
        }
    }
    for pod in 0..k {
        for e in 0..h {
            for p in 0..h {
                add_host(&mut b, edge(pod, e), Some(port(spec, p + 1)?));
            }
        }
    }
    b.build()
}

/// Every leaf is linked to every spine. Spines are s1..=sS, leaves follow;
/// a leaf uses ports 1..=H for hosts and H+1..=H+S for spines; spine port
/// l leads to leaf l.
fn leafspine(
    spec: &str,
    spines: usize,
    leaves: usize,
    hosts: usize,
) -> Result<Topology, TopoError> {
    if spines == 0 || leaves == 0 {
        return Err(TopoError::invalid(
            spec,
            "spines and leaves must be at least 1",
        ));
    }
    if spines.saturating_mul(leaves) > 10_000_000 || leaves.saturating_mul(hosts) > 1_000_000 {
        return Err(too_big(spec, "fabric"));
    }
    let mut b = TopologyBuilder::new(spec);
    add_switches(&mut b, spines + leaves);
    for l in 0..leaves {
        for s in 0..spines {
            b.link(
                format!("s{}", spines + l + 1),
                Some(port(spec, hosts + s + 1)?),
                format!("s{}", s + 1),
                Some(port(spec, l + 1)?),
            );
        }
    }
    for l in 0..leaves {
        for p in 0..hosts {
            add_host(&mut b, spines + l + 1, Some(port(spec, p + 1)?));
        }
    }
    b.build()
}

/// A small network modelled on Fig. 4 of the INT-path paper: 7 switches,
/// 10 links, 4 odd-degree switches (s2, s3, s5, s7), so 2 paths cover it.
/// Every switch has one host.
fn paper_fig4(spec: &str) -> Result<Topology, TopoError> {
    const LINKS: [(usize, usize); 10] = [
        (1, 2),
        (1, 3),
        (2, 3),
        (2, 4),
        (3, 5),
        (4, 5),
        (4, 6),
        (5, 7),
        (6, 7),
        (4, 7),
    ];
    let mut b = TopologyBuilder::new(spec);
    add_switches(&mut b, 7);
    for s in 1..=7 {
        add_host(&mut b, s, None);
    }
    for (x, y) in LINKS {
        b.link(format!("s{x}"), None, format!("s{y}"), None);
    }
    b.build()
}

/// A connected simple graph with `n` switches and `m` links; with `odd`,
/// exactly that many switches have odd degree (the paper's Fig. 8 varies
/// it). A random spanning tree keeps it connected; the other links are
/// random, then rewired one end at a time to reach the odd count.
fn random(
    spec: &str,
    n: usize,
    m: usize,
    odd: Option<usize>,
    seed: usize,
    hosts: usize,
) -> Result<Topology, TopoError> {
    let bad = |why: String| Err(TopoError::invalid(spec, why));
    if n == 0 || n > 10_000_000 {
        return bad("n must be from 1 to 10000000".into());
    }
    let max_m = n * (n - 1) / 2;
    if m + 1 < n || m > max_m {
        return bad(format!(
            "m must be from n-1 (connected) to n(n-1)/2 = {max_m}, got {m}"
        ));
    }
    if let Some(o) = odd {
        if o % 2 != 0 || o > n {
            return bad(format!("odd must be even and at most n, got {o}"));
        }
    }
    if n.saturating_mul(hosts) > 1_000_000 {
        return Err(too_big(spec, "host count"));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed as u64);
    let mut g = RandomGraph::new(n, m);
    for v in 1..n {
        let u = rng.random_range(0..v);
        g.add(u as u32, v as u32, true);
    }
    if m - (n - 1) > (max_m - (n - 1)) / 2 {
        // Dense: pick from the complement of the tree.
        let mut rest: Vec<(u32, u32)> = (0..n as u32)
            .flat_map(|u| (u + 1..n as u32).map(move |v| (u, v)))
            .filter(|&e| !g.has(e.0, e.1))
            .collect();
        for i in 0..m - (n - 1) {
            let j = rng.random_range(i..rest.len());
            rest.swap(i, j);
            g.add(rest[i].0, rest[i].1, false);
        }
    } else {
        while g.edges.len() < m {
            let (u, v) = (rng.random_range(0..n as u32), rng.random_range(0..n as u32));
            if u != v && !g.has(u, v) {
                g.add(u, v, false);
            }
        }
    }
    if let Some(o) = odd {
        if !g.fix_parity(o, &mut rng) {
            return bad(format!(
                "could not reach {o} odd-degree switches with n={n}, m={m}; try other values"
            ));
        }
    }
    let mut b = TopologyBuilder::new(spec);
    add_switches(&mut b, n);
    for (u, v, _) in &g.edges {
        b.link(format!("s{}", u + 1), None, format!("s{}", v + 1), None);
    }
    for s in 1..=n {
        for _ in 0..hosts {
            add_host(&mut b, s, None);
        }
    }
    b.build()
}

/// The edge set of [`random`] while it is being shaped.
struct RandomGraph {
    /// (u, v, in the spanning tree); u < v.
    edges: Vec<(u32, u32, bool)>,
    set: HashSet<(u32, u32)>,
    /// Non-tree edges incident to each vertex (indices into `edges`).
    free: Vec<Vec<u32>>,
    degree: Vec<u32>,
}

impl RandomGraph {
    fn new(n: usize, m: usize) -> Self {
        RandomGraph {
            edges: Vec::with_capacity(m),
            set: HashSet::with_capacity(m),
            free: vec![Vec::new(); n],
            degree: vec![0; n],
        }
    }

    fn key(u: u32, v: u32) -> (u32, u32) {
        (u.min(v), u.max(v))
    }

    fn has(&self, u: u32, v: u32) -> bool {
        self.set.contains(&Self::key(u, v))
    }

    fn add(&mut self, u: u32, v: u32, tree: bool) {
        let (u, v) = Self::key(u, v);
        let i = self.edges.len() as u32;
        self.edges.push((u, v, tree));
        self.set.insert((u, v));
        self.degree[u as usize] += 1;
        self.degree[v as usize] += 1;
        if !tree {
            self.free[u as usize].push(i);
            self.free[v as usize].push(i);
        }
    }

    /// Moves the `from` end of non-tree edge `i` to `to`, flipping the
    /// parity of both; false if that would duplicate an edge.
    fn move_end(&mut self, i: u32, from: u32, to: u32) -> bool {
        let (u, v, _) = self.edges[i as usize];
        let other = if u == from { v } else { u };
        if other == to || self.has(other, to) {
            return false;
        }
        self.set.remove(&(u, v));
        let (a, b) = Self::key(other, to);
        self.edges[i as usize] = (a, b, false);
        self.set.insert((a, b));
        let list = &mut self.free[from as usize];
        let pos = list.iter().position(|&e| e == i).expect("incident edge");
        list.swap_remove(pos);
        self.free[to as usize].push(i);
        self.degree[from as usize] -= 1;
        self.degree[to as usize] += 1;
        true
    }

    /// Rewires non-tree edges until exactly `target` vertices have odd degree.
    fn fix_parity(&mut self, target: usize, rng: &mut ChaCha8Rng) -> bool {
        let n = self.degree.len() as u32;
        let mut odd: Vec<u32> = (0..n)
            .filter(|&v| self.degree[v as usize] % 2 == 1)
            .collect();
        let mut pos = vec![u32::MAX; n as usize];
        for (i, &v) in odd.iter().enumerate() {
            pos[v as usize] = i as u32;
        }
        let toggle = |v: u32, odd: &mut Vec<u32>, pos: &mut Vec<u32>| {
            if pos[v as usize] == u32::MAX {
                pos[v as usize] = odd.len() as u32;
                odd.push(v);
            } else {
                let i = pos[v as usize] as usize;
                let last = *odd.last().expect("non-empty");
                odd.swap_remove(i);
                if last != v {
                    pos[last as usize] = i as u32;
                }
                pos[v as usize] = u32::MAX;
            }
        };
        if self.edges.iter().all(|e| e.2) {
            // A tree: its parity is fixed by its shape.
            return odd.len() == target;
        }
        let mut budget = 200 * (odd.len().abs_diff(target) + 1) + 100_000;
        while odd.len() != target {
            if budget == 0 {
                return false;
            }
            budget -= 1;
            let want_odd = odd.len() > target;
            // Two vertices of the parity to flip, the first with a free edge.
            let pick = |rng: &mut ChaCha8Rng, odd: &Vec<u32>| -> Option<u32> {
                if want_odd {
                    (odd.len() >= 2).then(|| odd[rng.random_range(0..odd.len())])
                } else {
                    let v = rng.random_range(0..n);
                    (pos[v as usize] == u32::MAX).then_some(v)
                }
            };
            let (Some(u), Some(v)) = (pick(rng, &odd), pick(rng, &odd)) else {
                continue;
            };
            if u == v {
                continue;
            }
            // Best: one edge end moves from u to v, fixing both.
            let mut moved = [u, v].into_iter().find_map(|x| {
                let y = if x == u { v } else { u };
                let free = &self.free[x as usize];
                let e = *free.get(rng.random_range(0..free.len().max(1)))?;
                self.move_end(e, x, y).then_some((x, y))
            });
            // Otherwise hand u's wrong parity to a random vertex: never
            // further from the target, and the walk soon meets a partner.
            if moved.is_none() {
                let w = rng.random_range(0..n);
                moved = if let Some(&e) = self.free[u as usize].first() {
                    self.move_end(e, u, w).then_some((u, w))
                } else {
                    let e = rng.random_range(0..self.edges.len() as u32);
                    let (a, b, tree) = self.edges[e as usize];
                    let x = if rng.random_bool(0.5) { a } else { b };
                    (!tree && x != u && self.move_end(e, x, u)).then_some((x, u))
                };
            }
            if let Some((x, y)) = moved {
                toggle(x, &mut odd, &mut pos);
                toggle(y, &mut odd, &mut pos);
            }
        }
        true
    }
}
