//! Kinds for spans that carry none. OpenTracing's manual spans often set
//! no `span.kind`: DeathStarBench's social network and media services
//! record a `*_server` span under the caller's `*_client` span and no kind
//! on either. The call is still plain in the tree: a span whose parent
//! belongs to another service is where its service began work for that
//! caller, and the parent is the caller's wait on it.

use super::{Kind, Span};
use std::collections::HashMap;

/// Gives spans without a kind the kind their place in the tree shows: a
/// span whose parent is another service's span is a server span; that
/// parent, when it has no kind either, sits inside its own service's work
/// (its parent is of the same service) and has no other service's span
/// under it, is the client span of the call. Anything else stays without
/// a kind: a span over several services' spans is no one call's client
/// (its time would be each call's), and a service's first span, whose
/// time is its own work as well as the call's, is its service's, not the
/// call's.
pub(super) fn infer(spans: &mut [Span]) {
    // Most inputs give every span a kind: no index of them to build then.
    if spans.iter().all(|s| s.kind != Kind::Other) {
        return;
    }
    let by_id: HashMap<(&str, &str), usize> = (spans.iter().enumerate())
        .map(|(i, s)| ((s.trace_id.as_str(), s.span_id.as_str()), i))
        .collect();
    let parent = |s: &Span| {
        by_id
            .get(&(s.trace_id.as_str(), s.parent_id.as_deref()?))
            .copied()
    };
    // Per span, its parent when that is another service's span.
    let crossing: Vec<Option<usize>> = (spans.iter())
        .map(|s| parent(s).filter(|&p| spans[p].service != s.service))
        .collect();
    let nested: Vec<bool> = (spans.iter())
        .map(|s| parent(s).is_some_and(|p| spans[p].service == s.service))
        .collect();
    let mut callees: HashMap<usize, u32> = HashMap::new();
    for &p in crossing.iter().flatten() {
        *callees.entry(p).or_default() += 1;
    }
    let kinds: Vec<Kind> = (0..spans.len())
        .map(|i| match spans[i].kind {
            Kind::Other if crossing[i].is_some() => Kind::Server,
            Kind::Other if nested[i] && callees.get(&i) == Some(&1) => Kind::Client,
            k => k,
        })
        .collect();
    for (s, k) in spans.iter_mut().zip(kinds) {
        s.kind = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spans::Endpoint;

    fn span(id: &str, parent: Option<&str>, service: &str, kind: Kind) -> Span {
        Span {
            trace_id: "t".into(),
            span_id: id.into(),
            parent_id: parent.map(Into::into),
            service: service.into(),
            kind,
            start_ns: 0,
            end_ns: 1,
            endpoint: Endpoint::default(),
            shared: false,
            error: false,
        }
    }

    #[test]
    fn a_call_between_services_without_kinds_is_a_client_and_a_server() {
        use Kind::*;
        let mut spans = vec![
            // DeathStarBench: nginx → compose-post → text, no kinds.
            span("n0", None, "nginx", Other),
            span("n1", Some("n0"), "nginx", Other),
            span("c0", Some("n1"), "compose-post", Other),
            span("c1", Some("c0"), "compose-post", Other),
            span("t0", Some("c1"), "text", Other),
            // A database call no server answers stays without a kind.
            span("t1", Some("t0"), "text", Other),
            // One span over calls to two services is neither's client.
            span("c2", Some("c0"), "compose-post", Other),
            span("u0", Some("c2"), "user", Other),
            span("m0", Some("c2"), "media", Other),
            // Kinds given are kept.
            span("c3", Some("c0"), "compose-post", Client),
            span("s0", Some("c3"), "storage", Server),
            // One span a service, in any order: each a server, none a
            // client (each one's time is its own work too).
            span("z1", Some("z0"), "b", Other),
            span("z2", Some("z1"), "c", Other),
            span("z0", None, "a", Other),
        ];
        infer(&mut spans);
        let kinds: Vec<Kind> = spans.iter().map(|s| s.kind).collect();
        let expected = [
            Other, Client, Server, Client, Server, Other, Other, Server, Server, Client, Server,
            Server, Server, Other,
        ];
        assert_eq!(kinds, expected);
    }
}
