//! A diagnosis checked against a synthetic workload's truth: culprit ranks,
//! per-edge verdict accuracy, fabric-delay and clock-offset errors.

use crate::synth::Truth;
use intpath_diagnose::attribution::Verdict;
use intpath_diagnose::culprits::Culprit;
use intpath_diagnose::Diagnosis;
use std::collections::BTreeMap;

/// How well one ranking and one attribution matched the truth.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Score {
    /// Rank (1 = first) of each scored fault; `None` when not ranked.
    pub best_rank: Option<usize>,
    /// Every scored fault within the top 3.
    pub all_in_top3: bool,
    /// A decoy ranked above a real fault.
    pub decoy_above: bool,
    /// Slow edges whose true label is a local fault, and how many got it.
    pub labelled: usize,
    pub correct: usize,
    /// Of those labelled service or network/loss/host: right side.
    pub side_labelled: usize,
    pub side_correct: usize,
    /// Median |estimated − true| fabric excess over slow network edges, µs.
    pub fabric_err_us: Option<f64>,
    /// The same error over the true excess (median), for the goal's 10 %.
    pub fabric_rel_err: Option<f64>,
    /// Median |estimated − true| clock offset over host pairs, µs.
    pub clock_err_us: Option<f64>,
}

fn side(label: &str) -> Option<bool> {
    match label {
        "service" => Some(false),
        "network" | "loss" | "host" => Some(true),
        _ => None,
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// Where in `ranking` a fault of `kind` named `name` is (1-based). A link
/// has a single culprit whose kind is its weightier evidence: a congested
/// link (`link`) is found whichever leads (a full queue drops at its
/// tail), a lossy one (`loss`) only when its loss does.
pub fn rank_of(ranking: &[Culprit], kind: &str, name: &str) -> Option<usize> {
    let kind_ok = |k: &str| k == kind || kind == "link" && k == "loss";
    ranking
        .iter()
        .position(|c| kind_ok(c.kind.name()) && c.name == name)
        .map(|i| i + 1)
}

/// Where in `ranking` a true fault is. A queue on a host link that no probe
/// measures (an incast on a plan without `--include-hosts`) is named as the
/// link when its delay sits on one leg (`clocks::host_legs`);
/// where it could not be told from that host's own stack, the host's entry
/// names it as well.
fn rank_of_fault(d: &Diagnosis, ranking: &[Culprit], kind: &str, name: &str) -> Option<usize> {
    let direct = rank_of(ranking, kind, name);
    let unmeasured_host = (kind == "link")
        .then(|| d.index.links.iter().position(|l| l.is_named(name)))
        .flatten()
        .filter(|&l| d.index.unmeasured_host_link(l as u32))
        .map(|l| &d.index.links[l])
        .and_then(|l| {
            [&l.dst, &l.src]
                .into_iter()
                .find(|n| d.hosts.iter().any(|h| h == *n))
        });
    let via_host = unmeasured_host.and_then(|h| rank_of(ranking, "host", h));
    match (direct, via_host) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

pub fn score(d: &Diagnosis, ranking: &[Culprit], truth: &Truth) -> Score {
    let mut s = Score::default();
    let real: Vec<_> = truth.faults.iter().filter(|f| f.kind != "decoy").collect();
    let ranks: Vec<Option<usize>> = real
        .iter()
        .map(|f| rank_of_fault(d, ranking, &f.kind, &f.name))
        .collect();
    s.best_rank = ranks.iter().flatten().min().copied();
    s.all_in_top3 = !ranks.is_empty() && ranks.iter().all(|r| r.is_some_and(|r| r <= 3));
    let worst_real = ranks
        .iter()
        .map(|r| r.unwrap_or(usize::MAX))
        .max()
        .unwrap_or(usize::MAX);
    s.decoy_above = truth.faults.iter().filter(|f| f.kind == "decoy").any(|f| {
        rank_of(ranking, "link", &f.name)
            .is_some_and(|r| r < worst_real && ranking[r - 1].score > 0.0)
    });

    let (mut fabric_err, mut fabric_rel) = (Vec::new(), Vec::new());
    for (e, a) in d.edges.iter().zip(&d.attr) {
        let Some(t) = truth.edges.get(&e.server_span) else {
            continue;
        };
        if !a.slow || matches!(t.label.as_str(), "ok") {
            continue;
        }
        s.labelled += 1;
        s.correct += usize::from(a.verdict().name() == t.label);
        if let Some(true_side) = side(&t.label) {
            s.side_labelled += 1;
            s.side_correct += usize::from(side(a.verdict().name()) == Some(true_side));
        }
        if a.verdict() == Verdict::Network {
            let err = (a.fabric - t.fabric_excess_ns as f64).abs();
            fabric_err.push(err / 1e3);
            if t.fabric_excess_ns > 0 {
                fabric_rel.push(err / t.fabric_excess_ns as f64);
            }
        }
    }
    s.fabric_err_us = median(fabric_err);
    s.fabric_rel_err = median(fabric_rel);
    let clock_err: Vec<f64> = d
        .clocks
        .iter()
        .filter_map(|c| {
            let off = |h: u16| truth.clock_offsets_ns.get(&d.hosts[h as usize]).copied();
            let true_offset = off(c.server_host)? - off(c.client_host)?;
            Some((c.offset_ns - true_offset as f64).abs() / 1e3)
        })
        .collect();
    s.clock_err_us = median(clock_err);
    s
}

/// Slow edges with a true label, counted by (true label, verdict): where
/// the attribution's mistakes go.
pub fn confusion(d: &Diagnosis, truth: &Truth) -> BTreeMap<(String, &'static str), usize> {
    let mut m = BTreeMap::new();
    for (e, a) in d.edges.iter().zip(&d.attr) {
        match truth.edges.get(&e.server_span) {
            Some(t) if a.slow && t.label != "ok" => {
                *m.entry((t.label.clone(), a.verdict().name())).or_insert(0) += 1;
            }
            _ => {}
        }
    }
    m
}
