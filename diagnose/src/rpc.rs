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
        });
    }
    for (e, (trace, p)) in out.edges.iter_mut().zip(parents) {
        e.parent = p.and_then(|p| edge_of_server.get(&(trace, p)).copied());
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
