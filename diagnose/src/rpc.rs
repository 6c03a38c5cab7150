//! RPC edges: a client span joined to its server span. The client's own
//! clock gives the total T = cr − cs, the server's the service time
//! S = ss − sr, and their difference N = T − S (network plus stacks) is free
//! of any clock offset between the two hosts.

use crate::hosts::Hosts;
use crate::rejects::Rejects;
use crate::spans::{Kind, Span};
use std::collections::HashMap;

/// One RPC: caller → callee. Times are ns on the recording host's clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// Index into [`Edges::traces`].
    pub trace: u32,
    pub server_span: String,
    /// Indices into [`Edges::services`].
    pub caller: u16,
    pub callee: u16,
    /// Indices into `Topology::hosts()`.
    pub client_host: u16,
    pub server_host: u16,
    pub cs: i64,
    pub cr: i64,
    pub sr: i64,
    pub ss: i64,
    /// The edge whose server span made this call (the caller's request).
    pub parent: Option<u32>,
    /// Calls this edge's server made that are not edges themselves (no
    /// server span: dropped on the way or never answered; or rejected),
    /// as (cs, cr): its server waited on them all the same, and without
    /// them that wait would pass for the callee's own work.
    pub unjoined: Vec<(i64, i64)>,
}

impl Edge {
    pub fn total(&self) -> i64 {
        self.cr - self.cs
    }
    pub fn service(&self) -> i64 {
        self.ss - self.sr
    }
    pub fn network(&self) -> i64 {
        self.total() - self.service()
    }
}

/// Every joined edge with the names it refers to.
#[derive(Debug, Default)]
pub struct Edges {
    pub edges: Vec<Edge>,
    pub services: Vec<String>,
    pub traces: Vec<String>,
    pub rejects: Rejects,
}

/// Joins client and server spans into edges, counting every span that
/// cannot become (part of) one.
pub fn join(spans: &[Span], hosts: &mut Hosts) -> Edges {
    let mut out = Edges::default();
    let mut clients: HashMap<(&str, &str), usize> = HashMap::new();
    let mut servers: Vec<usize> = Vec::new();
    let mut seen: HashMap<(&str, &str, bool), ()> = HashMap::new();
    for (i, s) in spans.iter().enumerate() {
        let key = (
            s.trace_id.as_str(),
            s.span_id.as_str(),
            s.kind == Kind::Server,
        );
        if seen.insert(key, ()).is_some() {
            out.rejects
                .add_with("duplicate span", || format!("{}/{}", s.trace_id, s.span_id));
            continue;
        }
        match s.kind {
            Kind::Client => {
                clients.insert((&s.trace_id, &s.span_id), i);
            }
            Kind::Server => servers.push(i),
            Kind::Other => {}
        }
    }
    let mut service_ids: HashMap<&str, u16> = HashMap::new();
    let mut trace_ids: HashMap<&str, u32> = HashMap::new();
    let mut edge_of_server: HashMap<(&str, &str), u32> = HashMap::new();
    let mut parents: Vec<(&str, Option<&str>)> = Vec::new();
    let mut used = vec![false; spans.len()];
    let mut joined = vec![false; spans.len()];
    for &si in &servers {
        let s = &spans[si];
        let client_id = if s.shared {
            Some(s.span_id.as_str())
        } else {
            s.parent_id.as_deref()
        };
        let Some(client_id) = client_id else { continue };
        let Some(&ci) = clients.get(&(s.trace_id.as_str(), client_id)) else {
            out.rejects
                .add_with("orphan parent", || format!("{}/{}", s.trace_id, s.span_id));
            continue;
        };
        let c = &spans[ci];
        used[ci] = true;
        // Each side is placed by its own attributes or, failing those, by
        // the address the other side's span says it had.
        let client_host = hosts.place(c, s.endpoint.peer);
        let server_host = hosts.place(s, c.endpoint.peer);
        let (Some(client_host), Some(server_host)) = (client_host, server_host) else {
            let (who, seen_at) = match client_host {
                None => (c, s.endpoint.peer),
                Some(_) => (s, c.endpoint.peer),
            };
            out.rejects
                .add_with("unplaced host", || hosts.why_unplaced(who, seen_at));
            continue;
        };
        if s.end_ns - s.start_ns > c.end_ns - c.start_ns {
            out.rejects.add_with("negative network time", || {
                format!("{}/{}", s.trace_id, s.span_id)
            });
            continue;
        }
        let n = service_ids.len() as u16;
        let caller = *service_ids.entry(c.service.as_str()).or_insert(n);
        let n = service_ids.len() as u16;
        let callee = *service_ids.entry(s.service.as_str()).or_insert(n);
        let n = trace_ids.len() as u32;
        let trace = *trace_ids.entry(s.trace_id.as_str()).or_insert(n);
        joined[ci] = true;
        edge_of_server.insert((&s.trace_id, &s.span_id), out.edges.len() as u32);
        parents.push((s.trace_id.as_str(), c.parent_id.as_deref()));
        out.edges.push(Edge {
            trace,
            server_span: s.span_id.clone(),
            caller,
            callee,
            client_host,
            server_host,
            cs: c.start_ns,
            cr: c.end_ns,
            sr: s.start_ns,
            ss: s.end_ns,
            parent: None,
            unjoined: Vec::new(),
        });
    }
    for (e, (trace, p)) in out.edges.iter_mut().zip(parents) {
        e.parent = p.and_then(|p| edge_of_server.get(&(trace, p)).copied());
    }
    for (&(trace, _), &ci) in &clients {
        let c = &spans[ci];
        let parent = c.parent_id.as_deref();
        let parent = parent.and_then(|p| edge_of_server.get(&(trace, p)));
        if let (false, Some(&p)) = (joined[ci], parent) {
            out.edges[p as usize].unjoined.push((c.start_ns, c.end_ns));
        }
    }
    let unmatched = clients.values().filter(|&&ci| !used[ci]).count();
    for _ in 0..unmatched {
        out.rejects.add("client span without server span");
    }
    out.services = sorted_names(service_ids.into_iter().map(|(k, v)| (k, v as usize)));
    out.traces = sorted_names(trace_ids.into_iter().map(|(k, v)| (k, v as usize)));
    out
}

fn sorted_names<'a>(it: impl Iterator<Item = (&'a str, usize)>) -> Vec<String> {
    let mut v: Vec<_> = it.collect();
    v.sort_by_key(|(_, i)| *i);
    v.into_iter().map(|(k, _)| k.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spans::Endpoint;

    fn span(id: &str, parent: Option<&str>, kind: Kind, ip: &str, t: (i64, i64)) -> Span {
        Span {
            trace_id: "t".into(),
            span_id: id.into(),
            parent_id: parent.map(Into::into),
            service: format!("on {ip}"),
            kind,
            start_ns: t.0,
            end_ns: t.1,
            endpoint: Endpoint {
                ips: vec![ip.parse().unwrap()],
                ..Default::default()
            },
            shared: false,
        }
    }

    #[test]
    fn a_call_without_a_server_span_is_kept_on_its_callers_edge() {
        // A calls B (c0 → s0); B's work calls C (c1 → s1) and makes a call
        // that no server answered (c2).
        let (a, b, c) = ("10.0.0.1", "10.0.0.2", "10.0.0.3");
        let spans = [
            span("c0", None, Kind::Client, a, (0, 100)),
            span("s0", Some("c0"), Kind::Server, b, (5, 95)),
            span("c1", Some("s0"), Kind::Client, b, (10, 30)),
            span("s1", Some("c1"), Kind::Server, c, (12, 28)),
            span("c2", Some("s0"), Kind::Client, b, (40, 90)),
        ];
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(out.edges.len(), 2);
        assert_eq!(out.rejects.count("client span without server span"), 1);
        let b_edge = out.edges.iter().find(|e| e.server_span == "s0").unwrap();
        assert_eq!(b_edge.unjoined, vec![(40, 90)]);
    }
}
