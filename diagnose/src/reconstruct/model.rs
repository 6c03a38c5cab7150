//! The RPCs reconstruction works on: a client span joined to its server
//! span by the connection they share (what a sidecar or packet capture
//! sees), with the link to the caller's incoming request unknown.

use super::executors::Executor;
use crate::spans::{Kind, Span};
use std::collections::HashMap;

/// One RPC. Times are ns on the recording host's clock; a side is `None`
/// when its service is not instrumented (or the RPC is a root request).
#[derive(Debug, Clone, PartialEq)]
pub struct Rpc {
    /// Service ids into [`Rpcs::services`]; `caller` is `None` for roots.
    pub caller: Option<u16>,
    pub callee: u16,
    /// Client span: request sent, response received (caller's clock).
    pub client: Option<Side>,
    /// Server span: request received, response sent (callee's clock).
    pub server: Option<Side>,
    /// The RPC whose server handled the request that made this call, as
    /// the input said (ground truth when the input is instrumented).
    pub truth: Option<u32>,
    /// The span [`Rpcs::hide`] removed, kept only to name the hidden end's
    /// host (the address the connection went to or came from).
    pub hidden: Option<usize>,
}

/// One recorded span of an RPC: its index in the input, its times and
/// where it ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    pub span: usize,
    pub start: i64,
    pub end: i64,
    pub executor: Executor,
}

/// Every RPC of an input with the service names they refer to.
#[derive(Debug, Default, Clone)]
pub struct Rpcs {
    pub rpcs: Vec<Rpc>,
    pub services: Vec<String>,
}

impl Rpcs {
    /// Joins spans into RPCs: a server span with its client span (its
    /// `parentSpanId`, or its own id when shared), or alone as a root.
    pub fn join(spans: &[Span]) -> Self {
        let mut out = Rpcs::default();
        let mut ids: HashMap<String, u16> = HashMap::new();
        let mut sid = |name: &str, out: &mut Rpcs| -> u16 {
            *ids.entry(name.to_owned()).or_insert_with(|| {
                out.services.push(name.to_owned());
                (out.services.len() - 1) as u16
            })
        };
        let clients: HashMap<(&str, &str), usize> = spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == Kind::Client)
            .map(|(i, s)| ((s.trace_id.as_str(), s.span_id.as_str()), i))
            .collect();
        // RPC of each server span, keyed by its id, to resolve truths.
        let mut by_server: HashMap<(&str, &str), u32> = HashMap::new();
        let mut pending: Vec<Option<(usize, usize)>> = Vec::new();
        for (i, s) in spans.iter().enumerate() {
            if s.kind != Kind::Server {
                continue;
            }
            let cid = if s.shared {
                Some(&s.span_id)
            } else {
                s.parent_id.as_ref()
            };
            let ci = cid.and_then(|c| clients.get(&(s.trace_id.as_str(), c.as_str())).copied());
            let callee = sid(&s.service, &mut out);
            let caller = ci.map(|c| sid(&spans[c].service, &mut out));
            by_server.insert((&s.trace_id, &s.span_id), out.rpcs.len() as u32);
            pending.push(ci.map(|c| (c, i)));
            out.rpcs.push(Rpc {
                caller,
                callee,
                client: ci.map(|c| side(spans, c)),
                server: Some(side(spans, i)),
                truth: None,
                hidden: None,
            });
        }
        for (rpc, p) in out.rpcs.iter_mut().zip(pending) {
            let Some((c, _)) = p else { continue };
            let cs = &spans[c];
            rpc.truth = cs
                .parent_id
                .as_ref()
                .and_then(|p| by_server.get(&(cs.trace_id.as_str(), p.as_str())).copied());
        }
        out
    }

    /// Forgets which process and thread ran every span: timing alone.
    pub fn forget_executors(&mut self) {
        for r in &mut self.rpcs {
            for side in [&mut r.client, &mut r.server].into_iter().flatten() {
                side.executor = Executor::default();
            }
        }
    }

    pub fn service_id(&self, name: &str) -> Option<u16> {
        self.services
            .iter()
            .position(|s| s == name)
            .map(|i| i as u16)
    }

    /// Hides `service` as if it were not instrumented: its server spans
    /// and the client spans it recorded are dropped, and the RPCs into it
    /// become the parents of the RPCs it made.
    pub fn hide(&mut self, service: u16) {
        for r in &mut self.rpcs {
            if r.callee == service {
                r.hidden = r.server.take().map(|s| s.span);
            }
            if r.caller == Some(service) {
                r.hidden = r.client.take().map(|s| s.span);
            }
        }
    }
}

fn side(spans: &[Span], i: usize) -> Side {
    Side {
        span: i,
        start: spans[i].start_ns,
        end: spans[i].end_ns,
        executor: Executor::of(&spans[i]),
    }
}
