//! Fault targets: the links requests cross (so `auto` picks a fault that
//! hurts someone, and a decoy that hurts no one), and names resolved to
//! link ids of the fabric.

use super::app::App;
use super::faults::{FaultKind, FaultSpec};
use super::run::SynthError;
use intpath_core::link::LinkName;
use intpath_core::topo::Topology;
use intpath_diagnose::path::{LinkIndex, Resolver};
use rand::seq::SliceRandom;
use rand::Rng;
use std::collections::{BTreeSet, HashMap};

/// Switch-to-switch links that requests cross, from a sample of requests.
pub(super) fn used_links(
    app: App,
    topo: &Topology,
    index: &LinkIndex,
    placement: &HashMap<&'static str, u16>,
    rng: &mut impl Rng,
) -> BTreeSet<u32> {
    let mut pairs = BTreeSet::new();
    for _ in 0..200 {
        for (caller, k) in app.request(rng).calls() {
            pairs.insert((placement[caller], placement[k.service]));
        }
    }
    let mut res = Resolver::new(topo);
    let mut used = BTreeSet::new();
    for (a, b) in pairs {
        if let Ok(p) = res.path(index, a, b) {
            used.extend(p.all().filter(|&l| !index.host_link[l as usize]));
        }
    }
    used
}

/// Per host: calls its services make per request, over a sample of
/// requests drawn from their own stream (the workload's draws stay as
/// they were).
pub(super) fn calls_per_host(
    app: App,
    hosts: usize,
    placement: &HashMap<&'static str, u16>,
    seed: u64,
) -> Vec<f64> {
    use rand::SeedableRng;
    const SAMPLE: usize = 500;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0xca11);
    let mut calls = vec![0.0; hosts];
    for _ in 0..SAMPLE {
        for (caller, _) in app.request(&mut rng).calls() {
            calls[placement[caller] as usize] += 1.0;
        }
    }
    calls.iter_mut().for_each(|c| *c /= SAMPLE as f64);
    calls
}

pub(super) fn target(
    f: &FaultSpec,
    topo: &Topology,
    index: &LinkIndex,
    used: &BTreeSet<u32>,
    services: &[&str],
    placement: &HashMap<&'static str, u16>,
    rng: &mut impl Rng,
) -> Result<String, SynthError> {
    if let Some(t) = &f.target {
        return Ok(t.clone());
    }
    let pick = |v: Vec<String>, rng: &mut dyn rand::RngCore, what: &str| {
        v.choose(rng)
            .cloned()
            .ok_or_else(|| SynthError::Setup(format!("no {what} to pick for {:?}", f.kind)))
    };
    match f.kind {
        FaultKind::Service | FaultKind::Silent => pick(
            services[1..].iter().map(|s| s.to_string()).collect(),
            rng,
            "service",
        ),
        FaultKind::Link | FaultKind::Loss => pick(
            used.iter().map(|&l| index.name(l)).collect(),
            rng,
            "used link",
        ),
        // A host's link has no next switch to stamp a delay.
        FaultKind::Delay => pick(
            (used.iter())
                .filter(|&&l| !index.host_link[l as usize])
                .map(|&l| index.name(l))
                .collect(),
            rng,
            "used link between switches",
        ),
        FaultKind::Host | FaultKind::Incast => {
            let mut hs: Vec<u16> = placement.values().copied().collect();
            hs.sort_unstable();
            hs.dedup();
            pick(
                hs.iter()
                    .map(|&h| topo.hosts()[h as usize].name.clone())
                    .collect(),
                rng,
                "host",
            )
        }
        FaultKind::Decoy => {
            let free = (0..index.links.len() as u32)
                .filter(|l| {
                    !index.host_link[*l as usize]
                        && !used.contains(l)
                        && !used.contains(&reverse_of(index, *l))
                })
                .map(|l| index.name(l))
                .collect();
            pick(free, rng, "link no request crosses")
        }
    }
}

fn reverse_of(index: &LinkIndex, l: u32) -> u32 {
    index
        .id(&index.links[l as usize].reversed())
        .unwrap_or(u32::MAX)
}

/// The link into host `host` (its switch's port towards it).
pub(super) fn downlink(index: &LinkIndex, host: &str) -> Result<u32, SynthError> {
    index
        .links
        .iter()
        .position(|l| l.dst == host)
        .map(|l| l as u32)
        .ok_or_else(|| SynthError::Setup(format!("incast: {host:?} is not a connected host")))
}

pub(super) fn link_id(index: &LinkIndex, topo: &Topology, name: &str) -> Result<u32, SynthError> {
    LinkName::parse(name)
        .and_then(|n| n.resolve(topo))
        .and_then(|l| index.id(&l))
        .ok_or_else(|| SynthError::Setup(format!("{name:?} is not a link of {}", topo.origin())))
}
