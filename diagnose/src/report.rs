//! What a diagnosis prints: a table of slow edges, a summary (verdicts,
//! culprits with their evidence, rejects by reason), or JSON/CSV for scripts.

use crate::attribution::{Attribution, Verdict};
use crate::critical::TraceBlame;
use crate::culprits::requests::Requests;
use crate::culprits::{Culprit, CulpritKind};
use crate::rpc::Edge;
use crate::Diagnosis;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

fn ms(ns: f64) -> f64 {
    (ns / 1e3).round() / 1e3
}

/// What an edge's verdict points at.
pub fn blamed(d: &Diagnosis, e: &Edge, a: &Attribution) -> String {
    match a.verdict() {
        Verdict::Service => d.services[e.callee as usize].clone(),
        // The larger of INT's measured part and the unmeasured host link's.
        Verdict::Network => match a.unmeasured > a.fabric - a.unmeasured {
            true => a.unmeasured_link,
            false => a.hot_link,
        }
        .map(|l| d.index.name(l))
        .unwrap_or_default(),
        Verdict::Loss => a.lossy_link.map(|l| d.index.name(l)).unwrap_or_default(),
        Verdict::Host => format!(
            "{} / {}",
            d.hosts[e.client_host as usize], d.hosts[e.server_host as usize]
        ),
        Verdict::Dependency => (a.dependency_id)
            .and_then(|k| d.dependencies.get(k as usize).cloned())
            .unwrap_or_default(),
        Verdict::Downstream | Verdict::Ok => String::new(),
    }
}

/// One JSON object per RPC edge.
pub fn edge_json(d: &Diagnosis, i: usize) -> Value {
    let (e, a) = (&d.edges[i], &d.attr[i]);
    let host = |h: u16| d.hosts[h as usize].clone();
    let names = |ls: &[u32]| ls.iter().map(|&l| d.index.name(l)).collect::<Vec<_>>();
    json!({
        "trace": d.traces[e.trace as usize],
        "span": e.server_span,
        "caller": d.services[e.caller as usize],
        "callee": d.services[e.callee as usize],
        "client_host": host(e.client_host),
        "server_host": host(e.server_host),
        "total_ms": ms(e.total() as f64),
        "service_ms": ms(e.service() as f64),
        "network_ms": ms(e.network() as f64),
        "slow": a.slow,
        "excess_ms": ms(a.excess),
        "service_excess_ms": ms(a.service),
        "fabric_ms": ms(a.fabric),
        "fabric_lo_ms": ms(a.fabric_lo),
        "fabric_hi_ms": ms(a.fabric_hi),
        "loss_ms": ms(a.loss),
        "host_ms": ms(a.host),
        "downstream_ms": ms(a.downstream),
        "verdict": a.verdict().name(),
        "confidence": (f64::from(a.confidence) * 100.0).round() / 100.0,
        "coverage": (f64::from(a.coverage) * 100.0).round() / 100.0,
        "stale": a.stale,
        "culprit": blamed(d, e, a),
        "forward": d.paths[i].as_ref().map(|p| names(&p.forward)),
        "reverse": d.paths[i].as_ref().map(|p| names(&p.reverse)),
    })
}

pub fn rpcs_json(d: &Diagnosis) -> String {
    let all: Vec<Value> = (0..d.edges.len()).map(|i| edge_json(d, i)).collect();
    serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"
}

pub fn rpcs_csv(d: &Diagnosis) -> String {
    let cols = [
        "trace",
        "span",
        "caller",
        "callee",
        "client_host",
        "server_host",
        "total_ms",
        "service_ms",
        "network_ms",
        "slow",
        "excess_ms",
        "service_excess_ms",
        "fabric_ms",
        "fabric_lo_ms",
        "fabric_hi_ms",
        "loss_ms",
        "host_ms",
        "downstream_ms",
        "verdict",
        "confidence",
        "culprit",
    ];
    let mut s = cols.join(",") + "\n";
    for i in 0..d.edges.len() {
        let v = edge_json(d, i);
        let row: Vec<String> = cols
            .iter()
            .map(|c| match &v[*c] {
                Value::String(x) => x.replace(',', ";"),
                other => other.to_string(),
            })
            .collect();
        s += &(row.join(",") + "\n");
    }
    s
}

/// The slow edges as a table, worst first, at most `limit` rows.
pub fn table(d: &Diagnosis, limit: usize) -> String {
    if d.edges.is_empty() {
        // A monolith: nothing to split between services and the network.
        return String::new();
    }
    let mut slow: Vec<usize> = (0..d.edges.len()).filter(|&i| d.attr[i].slow).collect();
    slow.sort_by(|&a, &b| d.attr[b].excess.total_cmp(&d.attr[a].excess));
    let mut s = format!(
        "{:<26} {:>8} {:>8} {:>17} {:>7} {:>7} {:<10} {:>4}  culprit\n",
        "rpc (caller→callee)",
        "total",
        "service",
        "fabric [lo..hi]",
        "host",
        "loss",
        "verdict",
        "conf"
    );
    for &i in slow.iter().take(limit) {
        let (e, a) = (&d.edges[i], &d.attr[i]);
        let rpc = format!(
            "{}→{}",
            d.services[e.caller as usize], d.services[e.callee as usize]
        );
        let fabric = format!(
            "{:.2} [{:.2}..{:.2}]",
            ms(a.fabric),
            ms(a.fabric_lo),
            ms(a.fabric_hi)
        );
        let _ = writeln!(
            s,
            "{rpc:<26} {:>8.2} {:>8.2} {fabric:>17} {:>7.2} {:>7.2} {:<10} {:>4.2}  {}",
            ms(e.total() as f64),
            ms(e.service() as f64),
            ms(a.host),
            ms(a.loss),
            a.verdict().name(),
            a.confidence,
            blamed(d, e, a)
        );
    }
    if slow.len() > limit {
        let _ = writeln!(
            s,
            "… {} more slow edges (--format json lists all)",
            slow.len() - limit
        );
    }
    s
}

/// Verdict counts over slow edges.
pub fn verdicts(d: &Diagnosis) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for a in d.attr.iter().filter(|a| a.slow) {
        *m.entry(a.verdict().name()).or_insert(0) += 1;
    }
    m
}

/// Verdict counts, ranked culprits with evidence, clock pairs, rejects.
pub fn summary(d: &Diagnosis, culprits: &[Culprit], top: usize) -> String {
    let slow = d.attr.iter().filter(|a| a.slow).count();
    let mut s = format!(
        "{} spans → {} RPC edges, {} slow ({} traces)\n",
        d.spans,
        d.edges.len(),
        slow,
        d.traces.len()
    );
    if d.edges.is_empty() {
        s += "no calls between services: each service judged by its own work, each store by its calls\n";
    } else {
        s += "verdicts:";
        for (v, n) in verdicts(d) {
            let _ = write!(s, " {v} {n}");
        }
        s += "\n";
    }
    if let Some(why) = &d.without_int {
        let _ = writeln!(
            s,
            "no INT ({why}): the network is judged between hosts, links are not localised"
        );
    }
    if let Some(b) = &d.baseline {
        let _ = writeln!(
            s,
            "baseline: {} spans, {} traces: services and stores compared with their calls there",
            b.spans,
            b.traces.len()
        );
    }
    if top > 0 {
        if culprits.is_empty() && d.unanswered.iter().any(|u| !u.after_last_span) {
            s += "culprits: none among the calls that were answered (below: those that were not)\n";
        } else if culprits.is_empty() && d.baseline.is_some() {
            s += "culprits: none: nothing stands out of this run's own variation or above the baseline\n";
        } else if culprits.is_empty() {
            s += "culprits: none: nothing stands out of this run's own variation \
                  (a fault present for all of it needs a healthy period to compare with: --baseline)\n";
        } else {
            s += "culprits (q: false discovery rate; ms/req: time added per request):\n";
        }
    }
    let shown = &culprits[..top.min(culprits.len())];
    let kind_w = shown.iter().map(|c| c.kind.to_string().len()).max();
    let name_w = shown.iter().map(|c| c.name.chars().count()).max();
    for (i, c) in shown.iter().enumerate() {
        let q = c.q_value.map_or(String::new(), |q| format!("q {q:.2e}  "));
        let _ = writeln!(
            s,
            "  {}. {:<kw$} {:<nw$}  {q}{:>8.3} ms/req  {}",
            i + 1,
            c.kind.to_string(),
            c.name,
            c.score,
            c.evidence,
            kw = kind_w.unwrap_or(0),
            nw = name_w.unwrap_or(0),
        );
    }
    let together = one_machine(shown);
    if together.len() > 1 {
        let _ = writeln!(
            s,
            "one machine: {} are loopback addresses, processes sharing one CPU: named \
             together, the machine's load (other processes) is the likelier cause than \
             each process, and between them there is no wire (compare their during_s)",
            together.join(", ")
        );
    }
    for u in unanswered(d) {
        let why = match u.after_last_span {
            false => format!(
                "no server span: {} down, unreachable, or not exporting its spans",
                u.callee
            ),
            true => format!(
                "after {}'s last span, where the capture ends: answers not exported yet, \
                 not counted against it",
                u.callee
            ),
        };
        let _ = writeln!(
            s,
            "unanswered: {} → {} {} calls from {} s to {} s ({why})",
            u.caller, u.callee, u.calls, u.from_s, u.to_s,
        );
    }
    for f in failed(d) {
        let _ = writeln!(
            s,
            "failed: {} → {} {} of {} calls from {} s to {} s (status ERROR; {} after a call \
             of {}'s own failed)",
            f.caller, f.callee, f.failed, f.calls, f.from_s, f.to_s, f.passed_on, f.callee,
        );
    }
    if !d.edges.is_empty() {
        let _ = writeln!(s, "clock offsets: {} host pairs estimated", d.clocks.len());
    }
    if d.rejects.total() == 0 {
        s += "rejects: none\n";
    } else {
        s += &rejects_table(&d.rejects);
    }
    s
}

/// A caller's calls to a traced callee that got no answer, with when
/// (seconds after the first request, as culprits' `during_s`).
#[derive(serde::Serialize)]
struct UnansweredCalls<'a> {
    caller: &'a str,
    callee: &'a str,
    calls: u64,
    after_last_span: bool,
    from_s: f64,
    to_s: f64,
}

/// A time on the run's clock as seconds after the first request, to 0.1 s.
fn seconds_in(d: &Diagnosis) -> impl Fn(i64) -> f64 {
    let first = Requests::of(&d.edges, &d.entries).map_or(0, |r| r.first);
    move |ns| ((ns - first) as f64 / 1e8).round() / 10.0
}

fn unanswered(d: &Diagnosis) -> Vec<UnansweredCalls<'_>> {
    let s = seconds_in(d);
    (d.unanswered.iter())
        .map(|u| UnansweredCalls {
            caller: &u.caller,
            callee: &u.callee,
            calls: u.calls,
            after_last_span: u.after_last_span,
            from_s: s(u.first_ns),
            to_s: s(u.last_ns),
        })
        .collect()
}

/// A caller's calls to a callee that failed, with when (as
/// [`UnansweredCalls`]) and how many were failures passed on from below.
#[derive(serde::Serialize)]
struct FailedCalls<'a> {
    caller: &'a str,
    callee: &'a str,
    failed: u64,
    calls: u64,
    passed_on: u64,
    from_s: f64,
    to_s: f64,
}

fn failed(d: &Diagnosis) -> Vec<FailedCalls<'_>> {
    let s = seconds_in(d);
    (d.failed.iter())
        .map(|f| FailedCalls {
            caller: &d.services[f.caller as usize],
            callee: &d.services[f.callee as usize],
            failed: f.failed,
            calls: f.calls,
            passed_on: f.passed_on,
            from_s: s(f.first_ns),
            to_s: s(f.last_ns),
        })
        .collect()
}

/// The loopback addresses among the hosts of `culprits` (named alone or in
/// a pair), in the order named. Hosts that are loopback addresses are
/// processes of one machine (an application run on a developer's machine,
/// each service on its own 127.x address): what slows that machine slows
/// them all at once, which their spans alone cannot tell from a fault of
/// each, and a "network" between two of them is their stacks, not a wire.
fn one_machine(culprits: &[Culprit]) -> Vec<&str> {
    let mut hosts: Vec<&str> = Vec::new();
    for c in culprits {
        let named: Vec<&str> = match c.kind {
            CulpritKind::Host => vec![c.name.as_str()],
            CulpritKind::Network => c.name.split(" <-> ").collect(),
            _ => continue,
        };
        for h in named {
            let loopback = h
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
            if loopback && !hosts.contains(&h) {
                hosts.push(h);
            }
        }
    }
    hosts
}

/// Every reason a span or an edge was dropped, most frequent first, with
/// its count and first example.
pub fn rejects_table(r: &crate::rejects::Rejects) -> String {
    let mut s = format!("rejects: {}\n", r.total());
    for (reason, n, example) in r.iter() {
        let _ = writeln!(
            s,
            "  {n:>6} {reason}{}",
            example
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default()
        );
    }
    s
}

/// `tested`: every candidate tested; the ten most significant that were
/// not named are printed with the culprits.
pub fn culprits_json(d: &Diagnosis, culprits: &[Culprit], tested: &[Culprit]) -> String {
    let rejects: BTreeMap<&str, u64> = d.rejects.iter().map(|(r, n, _)| (r, n)).collect();
    let clocks: Vec<Value> = d
        .clocks
        .iter()
        .map(|c| {
            json!({
                "client_host": d.hosts[c.client_host as usize],
                "server_host": d.hosts[c.server_host as usize],
                "offset_us": (c.offset_ns / 1e3).round(),
                "forward_us": (c.forward_ns / 1e3).round(),
                "reverse_us": (c.reverse_ns / 1e3).round(),
                "edges": c.edges,
            })
        })
        .collect();
    let near: Vec<&Culprit> = tested
        .iter()
        .filter(|t| {
            !culprits
                .iter()
                .any(|c| c.kind == t.kind && c.name == t.name)
        })
        .take(10)
        .collect();
    let v = json!({
        "culprits": culprits,
        "one_machine": one_machine(culprits),
        "not_named": near,
        "tested": tested.len(),
        "run": d.run,
        "int": d.evidence.is_some(),
        "without_int": d.without_int,
        "baseline": d.baseline.as_ref().map(|b| json!({
            "spans": b.spans,
            "traces": b.traces.len(),
            "edges": b.edges.len(),
        })),
        "verdicts": verdicts(d),
        "edges": d.edges.len(),
        "slow_edges": d.attr.iter().filter(|a| a.slow).count(),
        "clock_offsets": clocks,
        "unanswered": unanswered(d),
        "failed": failed(d),
        "rejects": rejects,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

pub fn culprits_csv(culprits: &[Culprit]) -> String {
    let mut s = "rank,kind,name,score,q_value,effect_ms\n".to_string();
    let opt = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
    for (i, c) in culprits.iter().enumerate() {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{}",
            i + 1,
            c.kind,
            c.name,
            c.score,
            opt(c.q_value),
            opt(c.effect_ms)
        );
    }
    s
}

/// Who a trace's blame points at: the culprit edge's service, link or hosts.
fn trace_culprit(d: &Diagnosis, t: &TraceBlame) -> String {
    t.culprit_edge.map_or(String::new(), |i| {
        blamed(
            d,
            &d.edges[i as usize],
            &Attribution {
                verdict: Some(t.verdict),
                ..d.attr[i as usize]
            },
        )
    })
}

/// Traces whose critical path has a slow call, worst first, at most `limit`
/// rows: the chain of services waited on and what it is blamed on.
pub fn traces_table(d: &Diagnosis, blames: &[TraceBlame], limit: usize) -> String {
    let mut slow: Vec<&TraceBlame> = blames.iter().filter(|t| t.verdict != Verdict::Ok).collect();
    slow.sort_by(|a, b| b.excess_ns.total_cmp(&a.excess_ns));
    let mut s = format!(
        "{:<18} {:>8} {:>8} {:<10} {:<28} critical path\n",
        "trace", "span", "excess", "blame", "culprit"
    );
    for t in slow.iter().take(limit) {
        let root = t.path.first().map(|&i| d.edges[i as usize].caller);
        let chain: Vec<&str> = root
            .into_iter()
            .chain(t.path.iter().map(|&i| d.edges[i as usize].callee))
            .map(|s| d.services[s as usize].as_str())
            .collect();
        let id = &d.traces[t.trace as usize];
        let _ = writeln!(
            s,
            "{:<18} {:>8.2} {:>8.2} {:<10} {:<28} {}",
            &id[..id.len().min(16)],
            ms(t.span_ns as f64),
            ms(t.excess_ns),
            t.verdict.name(),
            trace_culprit(d, t),
            chain.join(" → ")
        );
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for t in blames {
        *counts.entry(t.verdict.name()).or_insert(0) += 1;
    }
    let _ = writeln!(
        s,
        "{} traces, blamed: {}",
        blames.len(),
        counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s
}

/// One JSON object per trace: critical path (edge spans), blame, culprit.
pub fn traces_json(d: &Diagnosis, blames: &[TraceBlame]) -> String {
    let mut all = Vec::with_capacity(blames.len());
    for t in blames {
        let path: Vec<Value> = t
            .path
            .iter()
            .map(|&i| {
                let e = &d.edges[i as usize];
                json!({
                    "span": e.server_span,
                    "callee": d.services[e.callee as usize],
                    "verdict": d.attr[i as usize].verdict().name(),
                })
            })
            .collect();
        all.push(json!({
            "trace": d.traces[t.trace as usize],
            "span_ms": ms(t.span_ns as f64),
            "blame": t.verdict.name(),
            "excess_ms": ms(t.excess_ns),
            "culprit": trace_culprit(d, t),
            "critical_path": path,
        }));
    }
    serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(kind: CulpritKind, name: &str) -> Culprit {
        Culprit {
            kind,
            name: name.to_owned(),
            score: 1.0,
            q_value: None,
            effect_ms: None,
            evidence: Value::Null,
        }
    }

    #[test]
    fn loopback_hosts_named_alone_or_in_pairs_are_one_machine() {
        let culprits = [
            named(CulpritKind::Service, "127.0.0.9"),
            named(CulpritKind::Host, "127.0.4.1"),
            named(CulpritKind::Network, "127.0.4.3 <-> 127.0.4.1"),
            named(CulpritKind::Host, "::1"),
            named(CulpritKind::Host, "10.0.0.1"),
            named(CulpritKind::Host, "frontend"),
            named(CulpritKind::Network, "10.0.0.2 <-> 127.0.0.1"),
        ];
        assert_eq!(
            one_machine(&culprits),
            ["127.0.4.1", "127.0.4.3", "::1", "127.0.0.1"]
        );
        assert!(one_machine(&culprits[4..6]).is_empty());
    }
}
