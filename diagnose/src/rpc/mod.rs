//! RPC edges: a client span joined to its server span. The client's own
//! clock gives the total T = cr − cs, the server's the service time
//! S = ss − sr, and their difference N = T − S (network plus stacks) is free
//! of any clock offset between the two hosts.

mod entry;
mod failed;
mod horizon;
mod late;
mod unanswered;
mod walk;

pub(crate) use entry::union_within;
pub use entry::Entry;
pub use failed::Failed;
pub(crate) use horizon::longest_answer;
pub use unanswered::Unanswered;

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
    /// server span: a database or another callee that records none,
    /// dropped on the way or never answered; or rejected): its server
    /// waited on them all the same, and without them that wait would pass
    /// for the callee's own work.
    pub unjoined: Vec<Unjoined>,
    /// Its client or server span's status says the call failed.
    pub failed: bool,
}

/// A call without a server span, on its caller's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unjoined {
    pub cs: i64,
    pub cr: i64,
    pub callee: Callee,
}

/// Whom a call without a server span was to, as far as its client span
/// says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Callee {
    /// A callee that records no spans (a database): index into
    /// [`Edges::dependencies`].
    Dependency(u16),
    /// A traced service, index into [`Edges::services`], that answered
    /// other calls with server spans but not this one: down, unreachable
    /// or hung past its own exporter. Its caller's wait is all there is
    /// of it, and it is the callee's doing as far as the spans can say;
    /// `from`, the caller's host, says which way the call went.
    Silent { service: u16, from: Option<u16> },
    /// Not named, or answered by a server span that was rejected.
    Unknown,
}

impl Callee {
    pub fn dependency(self) -> Option<u16> {
        match self {
            Callee::Dependency(d) => Some(d),
            _ => None,
        }
    }
}

impl Edge {
    /// A call from `caller` to `callee` (service indices) over `cs..cr`,
    /// served from just after it arrived to just before it left, between
    /// hosts 0 and 1 of one trace, with no parent or waits: what unit
    /// tests vary from.
    #[cfg(test)]
    pub(crate) fn call(caller: u16, callee: u16, cs: i64, cr: i64) -> Edge {
        Edge {
            trace: 0,
            server_span: String::new(),
            caller,
            callee,
            client_host: 0,
            server_host: 1,
            cs,
            cr,
            sr: cs + 1,
            ss: cr - 1,
            parent: None,
            unjoined: Vec::new(),
            failed: false,
        }
    }

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
    /// Work no traced client waited on: server spans without a traced
    /// client, and consumer spans.
    pub entries: Vec<Entry>,
    pub services: Vec<String>,
    pub traces: Vec<String>,
    /// The callees that answered calls without a server span, by the name
    /// their client spans give them ([`crate::spans::Endpoint::peer_name`]).
    pub dependencies: Vec<String>,
    /// Calls to a named callee without a server span (a dependency, or a
    /// traced service that did not answer) made under an [`Entry`] rather
    /// than an edge.
    pub entry_calls: Vec<Unjoined>,
    /// Calls to traced callees that got no answer, most first.
    pub unanswered: Vec<Unanswered>,
    /// Calls answered with a failure, by caller and callee, most first.
    pub failed: Vec<Failed>,
    pub rejects: Rejects,
}

/// Joins client and server spans into edges, counting every span that
/// cannot become (part of) one.
pub fn join(spans: &[Span], hosts: &mut Hosts) -> Edges {
    let mut out = Edges::default();
    let mut clients: HashMap<(&str, &str), usize> = HashMap::new();
    let mut servers: Vec<usize> = Vec::new();
    // Spans where a service began work no traced client waited on: see
    // [`Entry`].
    let mut first: Vec<usize> = Vec::new();
    let mut seen: HashMap<(&str, &str, bool), ()> = HashMap::new();
    let mut by_id: HashMap<(&str, &str), usize> = HashMap::new();
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
        // Where a Zipkin server span shares its client's id, the id stands
        // for the server span: that is the one its children ran under.
        let id = (s.trace_id.as_str(), s.span_id.as_str());
        if s.kind == Kind::Server {
            by_id.insert(id, i);
        } else {
            by_id.entry(id).or_insert(i);
        }
        match s.kind {
            Kind::Client => {
                clients.insert((&s.trace_id, &s.span_id), i);
            }
            Kind::Server => servers.push(i),
            Kind::Consumer => first.push(i),
            Kind::Producer | Kind::Other => {}
        }
    }
    // Each call's server span, walked up to once, for its edge's parent,
    // its caller's waits and its request's entry alike.
    let above: HashMap<usize, &str> = (clients.values())
        .filter_map(|&ci| Some((ci, walk::server_above(spans, &by_id, &spans[ci])?)))
        .collect();
    // Server spans that made calls of their own.
    let calling: std::collections::HashSet<(&str, &str)> = (above.iter())
        .map(|(&ci, &p)| (spans[ci].trace_id.as_str(), p))
        .collect();
    // Server spans that made a call that failed.
    let failing: std::collections::HashSet<(&str, &str)> = (above.iter())
        .filter(|(&ci, _)| spans[ci].error)
        .map(|(&ci, &p)| (spans[ci].trace_id.as_str(), p))
        .collect();
    // Per edge: its server made a call that failed.
    let mut below: Vec<bool> = Vec::new();
    let mut service_ids: HashMap<&str, u16> = HashMap::new();
    let mut trace_ids: HashMap<&str, u32> = HashMap::new();
    let mut edge_of_server: HashMap<(&str, &str), u32> = HashMap::new();
    let mut parents: Vec<(&str, Option<&str>)> = Vec::new();
    let mut used = vec![false; spans.len()];
    // Per client span: the callee that took its call up only after it had
    // given up.
    let mut taken_late: Vec<Option<&str>> = vec![None; spans.len()];
    let mut joined = vec![false; spans.len()];
    // A callee some client spans reached with a server span is traced: a
    // call to it without one was lost on the way or never answered (a
    // lossy link, a timeout, the callee down), and is not a callee without
    // spans.
    let mut callee_of: HashMap<&str, &str> = HashMap::new();
    let leads = late::Leads::of(spans, &servers, &clients);
    let mut orphans: Vec<&Span> = Vec::new();
    for &si in &servers {
        let s = &spans[si];
        let Some(client_id) = client_id(s) else {
            first.push(si);
            continue;
        };
        let Some(&ci) = clients.get(&(s.trace_id.as_str(), client_id)) else {
            out.rejects
                .add_with("orphan parent", || format!("{}/{}", s.trace_id, s.span_id));
            orphans.push(s);
            // Its client is not in the data (a gateway that passes the
            // trace context on but exports nothing, a sampled-out or lost
            // span): the edge is lost, its service's work is not.
            if !s.shared {
                first.push(si);
            }
            continue;
        };
        let c = &spans[ci];
        used[ci] = true;
        if let Some(peer) = c.endpoint.peer_name.as_deref() {
            callee_of.entry(peer).or_insert(s.service.as_str());
        }
        // Taken up only after its caller had given up (a process stopped
        // or stalled, its accept queue stuck): to the caller it is a call
        // nobody answered, and the spans' times say nothing of the network
        // between them.
        if leads.taken_up_late(c, s) {
            out.rejects
                .add_with("taken up after its caller gave up", || {
                    format!("{}/{}", s.trace_id, s.span_id)
                });
            taken_late[ci] = Some(s.service.as_str());
            continue;
        }
        // Each side is placed by its own attributes or, failing those, by
        // the address the other side's span says it had.
        let within = (above.get(&ci))
            .and_then(|&id| by_id.get(&(c.trace_id.as_str(), id)))
            .map(|&i| &spans[i]);
        let client_host = hosts.place_caller(c, s.endpoint.peer, within);
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
        let waited = c.end_ns - c.start_ns;
        let mut ss = s.end_ns;
        if s.end_ns - s.start_ns > waited {
            // A server span that outlasts its client's by its own
            // bookkeeping (Node's HTTP server span ends when the answer is
            // flushed, after the client may have it) leaves the network's
            // share unknown, but its service did the work: dropped, a busy
            // server's slowest calls were the ones missing.
            //
            // Far later, its caller gave up on it (a timeout) while it
            // worked on: all of the wait was its own work when it made no
            // call (it hung). One that made calls may have waited on them
            // (timeouts cascading up from a callee down or unreachable), or
            // for a worker those stuck calls held: its callees' doing.
            let own = !calling.contains(&(s.trace_id.as_str(), s.span_id.as_str()));
            if !leads.ended_after_give_up(c, s) || !own {
                out.rejects.add_with("negative network time", || {
                    format!("{}/{}", s.trace_id, s.span_id)
                });
                if late::flushed(c, s) {
                    first.push(si);
                }
                continue;
            }
            // The call cost its caller the whole wait: the server span is cut
            // there.
            ss = s.start_ns + waited;
        }
        let n = service_ids.len() as u16;
        let caller = *service_ids.entry(c.service.as_str()).or_insert(n);
        let n = service_ids.len() as u16;
        let callee = *service_ids.entry(s.service.as_str()).or_insert(n);
        let n = trace_ids.len() as u32;
        let trace = *trace_ids.entry(s.trace_id.as_str()).or_insert(n);
        joined[ci] = true;
        edge_of_server.insert((&s.trace_id, &s.span_id), out.edges.len() as u32);
        parents.push((s.trace_id.as_str(), above.get(&ci).copied()));
        below.push(failing.contains(&(s.trace_id.as_str(), s.span_id.as_str())));
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
            ss,
            parent: None,
            unjoined: Vec::new(),
            failed: c.error || s.error,
        });
    }
    for (e, (trace, p)) in out.edges.iter_mut().zip(parents) {
        e.parent = p.and_then(|p| edge_of_server.get(&(trace, p)).copied());
    }
    // Calls to a traced callee that no server span answered.
    let callee_unanswered = |ci: usize| {
        let c = &spans[ci];
        let peer = c.endpoint.peer_name.as_deref().filter(|_| !used[ci]);
        peer.and_then(|p| callee_of.get(p).copied())
    };
    let names: HashMap<u16, &str> = service_ids.iter().map(|(&k, &v)| (v, k)).collect();
    let calls = horizon::Calls {
        answered: (out.edges.iter())
            .map(|e| (names[&e.caller], names[&e.callee], e.total()))
            .collect(),
        unanswered: (clients.values())
            .filter_map(|&ci| Some((ci, callee_unanswered(ci)?)))
            .collect(),
        orphans,
    };
    // Past its callee's last span at the capture's end, a call may have
    // been answered: it names nobody.
    let past_the_end = horizon::past_the_end(spans, &calls, &leads);
    let mut dependency_ids: HashMap<&str, u16> = HashMap::new();
    let mut dependency_call = vec![false; spans.len()];
    for (&(trace, _), &ci) in &clients {
        let c = &spans[ci];
        let parent = above
            .get(&ci)
            .and_then(|&p| edge_of_server.get(&(trace, p)));
        if joined[ci] {
            continue;
        }
        let peer = c.endpoint.peer_name.as_deref().filter(|_| !used[ci]);
        let answerable = callee_unanswered(ci).filter(|_| !past_the_end.contains(&ci));
        let silent = (taken_late[ci].or(answerable)).map(|callee| {
            let n = service_ids.len() as u16;
            *service_ids.entry(callee).or_insert(n)
        });
        let name = peer.filter(|name| !callee_of.contains_key(name));
        // A call hangs on its caller's edge or, made under a server span no
        // traced client called (an entry service's own query), is its
        // callee's call alone; otherwise it is nobody's, and names none.
        let named = name.is_some() || silent.is_some();
        let under_entry = parent.is_none() && named && above.contains_key(&ci);
        if parent.is_none() && !under_entry {
            continue;
        }
        // Past u16::MAX names (an address per request, say) the rest
        // stay unnamed waits.
        let dependency = name.and_then(|name| {
            if let Some(&id) = dependency_ids.get(name) {
                return Some(id);
            }
            let id = u16::try_from(dependency_ids.len()).ok()?;
            dependency_ids.insert(name, id);
            Some(id)
        });
        let callee = match (dependency, silent) {
            (Some(d), _) => Callee::Dependency(d),
            (None, Some(service)) => {
                let from = match parent {
                    Some(&p) => Some(out.edges[p as usize].server_host),
                    // The entry's server span, where the call was made.
                    None => (above.get(&ci))
                        .and_then(|&id| by_id.get(&(trace, id)))
                        .and_then(|&si| hosts.place(&spans[si], None)),
                };
                Callee::Silent { service, from }
            }
            (None, None) => Callee::Unknown,
        };
        let call = Unjoined {
            cs: c.start_ns,
            cr: c.end_ns,
            callee,
        };
        match parent {
            Some(&p) => out.edges[p as usize].unjoined.push(call),
            None if callee != Callee::Unknown => out.entry_calls.push(call),
            None => continue,
        }
        dependency_call[ci] = dependency.is_some();
    }
    // A call to a named callee without spans is a dependency's call, not a
    // span that failed to join.
    out.entries = entry::entries(
        spans,
        first,
        &clients,
        &above,
        &mut service_ids,
        &mut trace_ids,
    );
    // The earliest is the example, whatever order the map gives.
    let mut unmatched: Vec<usize> = (clients.values())
        .filter(|&&ci| !used[ci] && !dependency_call[ci])
        .copied()
        .collect();
    unmatched.sort_unstable_by_key(|&ci| {
        let c = &spans[ci];
        (c.start_ns, &c.trace_id, &c.span_id)
    });
    for ci in unmatched {
        let c = &spans[ci];
        // A root client span is no request's call (a query at start-up,
        // a timer's): nothing waited on it.
        let reason = match c.parent_id {
            None => "call made outside any request",
            Some(_) => "client span without server span",
        };
        out.rejects
            .add_with(reason, || format!("{}/{}", c.trace_id, c.span_id));
        let callee = (c.parent_id.as_ref())
            .and(c.endpoint.peer_name.as_deref())
            .and_then(|peer| callee_of.get(peer));
        if let Some(&callee) = callee {
            let past = past_the_end.contains(&ci);
            unanswered::count(&mut out.unanswered, c, callee, past);
        }
    }
    out.unanswered.sort_by_key(|u| std::cmp::Reverse(u.calls));
    out.failed = failed::classes(&out.edges, &below);
    out.services = sorted_names(service_ids.into_iter().map(|(k, v)| (k, v as usize)));
    out.traces = sorted_names(trace_ids.into_iter().map(|(k, v)| (k, v as usize)));
    out.dependencies = sorted_names(dependency_ids.into_iter().map(|(k, v)| (k, v as usize)));
    out
}

/// The span a server span's client span has as its id: its own where a
/// Zipkin server span shares its client's, else its parent's.
pub(super) fn client_id(s: &Span) -> Option<&str> {
    match s.shared {
        true => Some(s.span_id.as_str()),
        false => s.parent_id.as_deref(),
    }
}

fn sorted_names<'a>(it: impl Iterator<Item = (&'a str, usize)>) -> Vec<String> {
    let mut v: Vec<_> = it.collect();
    v.sort_by_key(|(_, i)| *i);
    v.into_iter().map(|(k, _)| k.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::late::{FLUSH_NS, GAVE_UP_NS};
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
            error: false,
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
        let example = out.rejects.iter().find_map(|(_, _, e)| e);
        assert_eq!(example, Some("t/c2"));
        let b_edge = out.edges.iter().find(|e| e.server_span == "s0").unwrap();
        let waits: Vec<(i64, i64)> = b_edge.unjoined.iter().map(|u| (u.cs, u.cr)).collect();
        assert_eq!(waits, vec![(40, 90)]);
    }

    #[test]
    fn calls_made_under_a_handlers_own_spans_are_its_requests_calls() {
        // B's server span s0 holds an INTERNAL handler span h0, under which
        // B calls C (c1 → s1) and a database no server span answers (c2),
        // the latter through two nested client spans (c2 around c3).
        let (a, b, c) = ("10.0.0.1", "10.0.0.2", "10.0.0.3");
        let mut spans = vec![
            span("c0", None, Kind::Client, a, (0, 100)),
            span("s0", Some("c0"), Kind::Server, b, (5, 95)),
            span("h0", Some("s0"), Kind::Other, b, (6, 94)),
            span("c1", Some("h0"), Kind::Client, b, (10, 30)),
            span("s1", Some("c1"), Kind::Server, c, (12, 28)),
            span("c2", Some("h0"), Kind::Client, b, (40, 90)),
            span("c3", Some("c2"), Kind::Client, b, (41, 89)),
        ];
        // The outer client span names the database it called. A second
        // call to C got no server span (lost on the way; C answered a later
        // call): C is traced, so that call is a wait, not a callee without
        // spans.
        spans[5].endpoint.peer_name = Some("postgresql@db:5432".into());
        spans[3].endpoint.peer_name = Some("10.0.0.3:8080".into());
        let mut lost = span("c4", Some("h0"), Kind::Client, b, (91, 93));
        lost.endpoint.peer_name = Some("10.0.0.3:8080".into());
        spans.push(lost);
        spans.push(span("c5", None, Kind::Client, b, (96, 99)));
        spans.push(span("s5", Some("c5"), Kind::Server, c, (97, 98)));
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        let edge = |id: &str| out.edges.iter().position(|e| e.server_span == id).unwrap();
        assert_eq!(out.edges[edge("s1")].parent, Some(edge("s0") as u32));
        let mut waits = out.edges[edge("s0")].unjoined.clone();
        waits.sort_unstable();
        let wait = |cs, cr, callee| Unjoined { cs, cr, callee };
        let c_id = out
            .services
            .iter()
            .position(|s| s == "on 10.0.0.3")
            .unwrap();
        let expected = [
            wait(40, 90, Callee::Dependency(0)),
            wait(41, 89, Callee::Unknown),
            wait(
                91,
                93,
                Callee::Silent {
                    service: c_id as u16,
                    from: out.edges[edge("s0")].server_host.into(),
                },
            ),
        ];
        assert_eq!(waits, expected);
        assert_eq!(out.dependencies, vec!["postgresql@db:5432".to_owned()]);
        // A call to a named callee is not a span that failed to join.
        assert_eq!(out.rejects.count("client span without server span"), 2);
        // The lost call is B's unanswered call to C; the nested span names
        // no callee.
        let lost = Unanswered {
            caller: "on 10.0.0.2".into(),
            callee: "on 10.0.0.3".into(),
            calls: 1,
            after_last_span: false,
            first_ns: 91,
            last_ns: 91,
        };
        assert_eq!(out.unanswered, vec![lost]);
        spans.pop();

        // Spans that are their own ancestors (broken input) end the walk:
        // no parent, no panic.
        let parent_of_s1 = |spans: &[Span]| {
            let out = join(spans, &mut Hosts::discovered(&HashMap::new()));
            out.edges
                .iter()
                .find(|e| e.server_span == "s1")
                .unwrap()
                .parent
        };
        spans[2].parent_id = Some("c1".into());
        assert_eq!(parent_of_s1(&spans), None);
        // So does a chain that leaves the service: a span of another one.
        spans[2].parent_id = Some("s0".into());
        spans[2].service = "on 10.0.0.9".into();
        assert_eq!(parent_of_s1(&spans), None);
    }

    #[test]
    fn a_call_recorded_under_its_callees_name_is_its_parents_call() {
        // HotROD: customer's server span s0 queries "mysql", recorded by
        // customer's process as service `mysql` (m0, a client span with
        // peer.service). It is customer's wait on a database, not a span
        // of a caller whose server span is missing.
        let (a, b) = ("10.0.0.1", "10.0.0.2");
        let mut spans = vec![
            span("c0", None, Kind::Client, a, (0, 100)),
            span("s0", Some("c0"), Kind::Server, b, (5, 95)),
            span("m0", Some("s0"), Kind::Client, b, (10, 80)),
        ];
        spans[2].service = "mysql".into();
        spans[2].endpoint.peer_name = Some("mysql".into());
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(out.edges.len(), 1);
        let wait = Unjoined {
            cs: 10,
            cr: 80,
            callee: Callee::Dependency(0),
        };
        assert_eq!(out.edges[0].unjoined, vec![wait]);
        assert_eq!(out.dependencies, vec!["mysql".to_owned()]);
        assert_eq!(out.rejects.total(), 0, "{:?}", out.rejects);
        // Under another service's client span it is no such call: that is
        // a caller whose server span is missing.
        spans[2].parent_id = Some("c0".into());
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        assert!(out.edges[0].unjoined.is_empty());
        assert_eq!(out.rejects.count("client span without server span"), 1);
    }

    #[test]
    fn a_request_that_no_traced_client_sent_has_an_entry_with_its_own_work() {
        // A's server span s0 is the request's first span (a browser sent
        // it). Under it A calls B (c1 → s1) and, overlapping, a database
        // (c2): it waited 10..50, and worked the other 60 ns.
        let (a, b) = ("10.0.0.1", "10.0.0.2");
        let spans = [
            span("s0", None, Kind::Server, a, (0, 100)),
            span("c1", Some("s0"), Kind::Client, a, (10, 30)),
            span("s1", Some("c1"), Kind::Server, b, (12, 28)),
            span("c2", Some("s0"), Kind::Client, a, (20, 50)),
        ];
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(out.edges.len(), 1);
        let service = out
            .services
            .iter()
            .position(|s| s == "on 10.0.0.1")
            .unwrap() as u16;
        let entry = Entry {
            trace: 0,
            service,
            sr: 0,
            ss: 100,
            wait: 40,
        };
        assert_eq!(out.entries, vec![entry]);
        assert_eq!(entry.own(), 60);
    }

    #[test]
    fn an_entry_services_unanswered_call_is_its_callees_silence_from_its_host() {
        // A's server span s0 was called by no traced client; under it A
        // calls B three times by address: c1 and c3 answered, c2 not.
        let (a, b) = ("10.0.0.1", "10.0.0.2");
        let mut spans = vec![
            span("s0", None, Kind::Server, a, (0, 100)),
            span("c1", Some("s0"), Kind::Client, a, (10, 30)),
            span("s1", Some("c1"), Kind::Server, b, (12, 28)),
            span("c2", Some("s0"), Kind::Client, a, (50, 90)),
            span("c3", Some("s0"), Kind::Client, a, (91, 99)),
            span("s3", Some("c3"), Kind::Server, b, (93, 97)),
        ];
        for c in [1, 3, 4] {
            spans[c].endpoint.peer_name = Some("10.0.0.2:8080".into());
        }
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        let b_id = out.services.iter().position(|s| s == "on 10.0.0.2");
        let silent = Callee::Silent {
            service: b_id.unwrap() as u16,
            from: Some(out.edges[0].client_host),
        };
        let call = Unjoined {
            cs: 50,
            cr: 90,
            callee: silent,
        };
        assert_eq!(out.entry_calls, vec![call]);
    }

    /// Requests one every 10 ms for a second, from A (10.0.0.1) to B (.2)
    /// and to C (.3), and from E (.6) to F (.7), F called by E alone. The
    /// capture holds B's spans up to `b_ends` ms, C's up to `c_ends`, E's
    /// up to `e_ends`, the rest to the end.
    fn capture_ending(b_ends: i64, c_ends: i64, e_ends: i64) -> Edges {
        let ms = 1_000_000;
        let pairs = [
            ("a", "10.0.0.1", 1000, "10.0.0.2", b_ends),
            ("b", "10.0.0.1", 1000, "10.0.0.3", c_ends),
            ("e", "10.0.0.6", e_ends, "10.0.0.7", 1000),
        ];
        let mut spans = Vec::new();
        for (i, (tag, caller, caller_ends, callee, callee_ends)) in
            (0..100).flat_map(|i| pairs.map(|p| (i, p)))
        {
            let t = i * 10 * ms;
            let (request, call) = (format!("{tag}r{i}"), format!("{tag}c{i}"));
            let mut c = span(
                &call,
                Some(&request),
                Kind::Client,
                caller,
                (t + ms, t + 3 * ms),
            );
            c.endpoint.peer_name = Some(format!("{callee}:80"));
            if t < caller_ends * ms {
                spans.push(span(&request, None, Kind::Server, caller, (t, t + 5 * ms)));
                spans.push(c);
            }
            if t < callee_ends * ms {
                let answer = (t + ms + 100_000, t + 3 * ms - 100_000);
                spans.push(span(
                    &format!("{tag}s{i}"),
                    Some(&call),
                    Kind::Server,
                    callee,
                    answer,
                ));
            }
        }
        join(&spans, &mut Hosts::discovered(&HashMap::new()))
    }

    fn silent_calls(out: &Edges, ip: &str) -> usize {
        let service = out.services.iter().position(|s| *s == format!("on {ip}"));
        let silent = |u: &&Unjoined| matches!(u.callee, Callee::Silent { service: s, .. } if Some(s as usize) == service);
        out.entry_calls.iter().filter(silent).count()
    }

    fn unanswered_past(out: &Edges) -> Vec<(u64, bool)> {
        (out.unanswered.iter())
            .map(|u| (u.calls, u.after_last_span))
            .collect()
    }

    #[test]
    fn calls_after_a_callees_last_span_at_the_captures_end_name_nobody() {
        // The capture ends while B's and C's last batches are still to be
        // exported: 10 and 5 calls past their last spans.
        let out = capture_ending(900, 950, 1000);
        let silent = |out: &Edges| (silent_calls(out, "10.0.0.2"), silent_calls(out, "10.0.0.3"));
        assert_eq!(silent(&out), (0, 0));
        assert_eq!(unanswered_past(&out), [(10, true), (5, true)]);
        // B stopped answering at 400 ms while C answered until 950 ms: 60
        // calls past its last span, far longer than the capture's end cut
        // C's, are B's silence.
        let out = capture_ending(400, 950, 1000);
        assert_eq!(silent(&out), (60, 0));
        assert_eq!(unanswered_past(&out), [(60, false), (5, true)]);
        // 300 ms of calls to B past its last span, six times C's 50: B's.
        let out = capture_ending(700, 950, 1000);
        assert_eq!(silent(&out), (30, 0));
        // Unless the capture cut another service far longer than C: E's
        // last 200 ms are missing, and F's work for them shows E went on.
        let out = capture_ending(700, 950, 800);
        assert_eq!(out.rejects.count("orphan parent"), 20);
        assert_eq!(silent(&out), (0, 0));
        assert_eq!(unanswered_past(&out), [(30, true), (5, true)]);
    }

    #[test]
    fn a_database_only_an_entry_service_queries_is_still_a_dependency() {
        // s0 was called by no traced client (a browser); it queries a
        // database that records no spans.
        let mut query = span("c0", Some("s0"), Kind::Client, "10.0.0.1", (2, 8));
        query.endpoint.peer_name = Some("postgresql@10.0.0.7:5432".into());
        let spans = [span("s0", None, Kind::Server, "10.0.0.1", (0, 10)), query];
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(out.dependencies, ["postgresql@10.0.0.7:5432"]);
        let call = Unjoined {
            cs: 2,
            cr: 8,
            callee: Callee::Dependency(0),
        };
        assert_eq!(out.entry_calls, vec![call]);
        assert_eq!(out.rejects.total(), 0);
        assert_eq!(out.entries[0].own(), 4);
    }

    #[test]
    fn a_server_span_that_outlasts_its_client_still_counts_its_services_work() {
        // B's server span ends 3 after A's client span: no edge, but B's
        // work (31 less its 10 waiting on C) is still B's.
        let (a, b, c) = ("10.0.0.1", "10.0.0.2", "10.0.0.3");
        let spans = [
            span("c0", None, Kind::Client, a, (0, 30)),
            span("s0", Some("c0"), Kind::Server, b, (2, 33)),
            span("c1", Some("s0"), Kind::Client, b, (5, 15)),
            span("s1", Some("c1"), Kind::Server, c, (6, 14)),
        ];
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(out.rejects.count("negative network time"), 1);
        assert_eq!(out.edges.len(), 1);
        // Later than a flush but sooner than a caller gives up: neither an
        // edge nor its service's work.
        let mut late = spans.clone();
        late[1].end_ns = 33 + FLUSH_NS;
        let late = join(&late, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(late.rejects.count("negative network time"), 1);
        assert!(late.entries.is_empty());
        // A caller that gave up long before (a timeout) on B, which had
        // called C: B may have waited on C, and the call stays a reject.
        let mut abandoned = spans.clone();
        abandoned[1].end_ns = 30 + GAVE_UP_NS;
        let gone = join(&abandoned, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(gone.rejects.count("negative network time"), 1);
        assert!(gone.entries.is_empty());
        // B gave up on C, which called nobody: C hung for all of B's wait,
        // and the call is an edge whose server span is cut there.
        let mut hung = spans.clone();
        hung[3].end_ns = 16 + GAVE_UP_NS;
        let hung = join(&hung, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(hung.rejects.count("negative network time"), 1, "B's");
        let cut = hung.edges.iter().find(|e| e.server_span == "s1").unwrap();
        assert_eq!((cut.sr, cut.ss, cut.total(), cut.network()), (6, 16, 10, 0));
        let b_id = out
            .services
            .iter()
            .position(|s| s == "on 10.0.0.2")
            .unwrap() as u16;
        let b_work = Entry {
            service: b_id,
            trace: 0,
            sr: 2,
            ss: 33,
            wait: 10,
        };
        assert_eq!(out.entries, vec![b_work]);
        assert_eq!(b_work.own(), 21);
    }

    #[test]
    fn a_call_taken_up_after_its_caller_gave_up_is_its_callees_silence() {
        // A calls B (c0 → s0); under it B calls C (c1), which takes the
        // call up only after B gave up on it (a stopped process resumed):
        // no edge, and B's wait on it is C's silence. Two calls of B's to C
        // before it were answered at once.
        let (a, b, c) = ("10.0.0.1", "10.0.0.2", "10.0.0.3");
        let late = (20 + GAVE_UP_NS, 25 + GAVE_UP_NS);
        let spans = vec![
            span("c0", None, Kind::Client, a, (0, 300)),
            span("s0", Some("c0"), Kind::Server, b, (2, 298)),
            span("c1", Some("s0"), Kind::Client, b, (5, 15)),
            span("s1", Some("c1"), Kind::Server, c, late),
            span("c2", None, Kind::Client, b, (0, 10)),
            span("s2", Some("c2"), Kind::Server, c, (1, 9)),
            span("c3", None, Kind::Client, b, (20, 30)),
            span("s3", Some("c3"), Kind::Server, c, (21, 29)),
        ];
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(out.rejects.count("taken up after its caller gave up"), 1);
        assert_eq!(out.edges.len(), 3);
        let c_id = out.services.iter().position(|s| s == "on 10.0.0.3");
        let s0 = out.edges.iter().find(|e| e.server_span == "s0").unwrap();
        let silent = Callee::Silent {
            service: c_id.unwrap() as u16,
            from: Some(s0.server_host),
        };
        let wait = Unjoined {
            cs: 5,
            cr: 15,
            callee: silent,
        };
        assert_eq!(s0.unjoined, vec![wait]);
        // C's clock a second ahead of B's: every call of theirs starts
        // after its client span ended, and only the late one is late.
        let mut ahead = spans.clone();
        for s in ahead.iter_mut().filter(|s| s.service == "on 10.0.0.3") {
            s.start_ns += 1_000_000_000;
            s.end_ns += 1_000_000_000;
        }
        let skewed = join(&ahead, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(skewed.rejects.count("taken up after its caller gave up"), 1);
        assert_eq!(skewed.edges.len(), 3);
        // Taken up late, but before its caller gave up by as much: an
        // edge (a slow one), as with any wait in a queue.
        let mut queued = spans.clone();
        queued[2].end_ns = 25 + GAVE_UP_NS;
        let out = join(&queued, &mut Hosts::discovered(&HashMap::new()));
        assert_eq!(out.edges.len(), 4);
        assert_eq!(out.rejects.total(), 0);
    }

    #[test]
    fn a_consumer_and_a_server_whose_client_is_missing_are_entries_too() {
        // A's server span s0 sends a message (p0, a producer: no wait) that
        // C consumes (k0) long after A answered; C calls B (c1 → s1)
        // while handling it. D's server span s2 was called by a client
        // whose span is not in the data (g0).
        let (a, b, c, d) = ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4");
        let spans = [
            span("s0", None, Kind::Server, a, (0, 20)),
            span("p0", Some("s0"), Kind::Producer, a, (5, 6)),
            span("k0", Some("p0"), Kind::Consumer, c, (200, 300)),
            span("c1", Some("k0"), Kind::Client, c, (210, 240)),
            span("s1", Some("c1"), Kind::Server, b, (212, 238)),
            span("s2", Some("g0"), Kind::Server, d, (400, 450)),
        ];
        let out = join(&spans, &mut Hosts::discovered(&HashMap::new()));
        let index = |ip: &str| {
            let name = format!("on {ip}");
            out.services.iter().position(|s| *s == name).unwrap() as u16
        };
        // The call made while handling the message is an edge with no
        // parent edge: nobody waited on the consumer.
        assert_eq!(out.edges.len(), 1);
        assert_eq!((out.edges[0].callee, out.edges[0].parent), (index(b), None));
        let entry = |ip, sr, ss, wait| Entry {
            service: index(ip),
            trace: 0,
            sr,
            ss,
            wait,
        };
        let expected = vec![
            entry(a, 0, 20, 0),
            entry(c, 200, 300, 30),
            entry(d, 400, 450, 0),
        ];
        assert_eq!(out.entries, expected);
        // The lost client is still said.
        assert_eq!(out.rejects.count("orphan parent"), 1);
        // The producer is no call its service waited on.
        assert_eq!(out.rejects.count("client span without server span"), 0);
    }
}
