//! From a call up to the server span it was made under.

use crate::spans::{Kind, Span};
use std::collections::HashMap;

/// Spans a walk up from a call passes at most: a longer chain is a cycle
/// in broken input, or nothing a service records between two calls.
const MAX_DEPTH: usize = 64;

/// The id of the server span `call` was made under: its nearest ancestor
/// of the same service that is a server span, or a consumer span (the
/// handling of a message, which is its service's work as a request's is).
/// Between the two, services
/// record spans of their own: a handler's or a middleware's INTERNAL
/// spans (Express, Spring, a `with tracer.start_as_current_span(…)`), an
/// HTTP library's client span around another's. A call made under them
/// is still its service's request's call, and waiting on it is not the
/// service's own work. The walk stops at another service's span: a caller
/// whose server span is missing makes its calls nobody's.
///
/// One exception: a call whose own parent is another service's server,
/// consumer or internal span was recorded by that service under its
/// callee's name (Jaeger's HotROD records its database queries as service
/// `mysql`, its cache's as `redis`, as OpenTracing's peer spans did); it
/// is that service's call. A parent that is a client span is no such
/// case: it is a caller whose server span is missing.
pub(super) fn server_above<'a>(
    spans: &'a [Span],
    by_id: &HashMap<(&str, &str), usize>,
    call: &'a Span,
) -> Option<&'a str> {
    let mut parent = call.parent_id.as_deref();
    let mut service = call.service.as_str();
    for depth in 0..MAX_DEPTH {
        let s = &spans[*by_id.get(&(call.trace_id.as_str(), parent?))?];
        if depth == 0 && s.service != service && s.kind != Kind::Client {
            service = &s.service;
        }
        if s.service != service {
            return None;
        }
        if matches!(s.kind, Kind::Server | Kind::Consumer) {
            return Some(&s.span_id);
        }
        parent = s.parent_id.as_deref();
    }
    None
}
