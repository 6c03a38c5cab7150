//! Zipkin v2 JSON: an array of spans, µs times, `kind` as text and
//! `localEndpoint`/`remoteEndpoint` addresses. A `shared: true` server span reuses its client's id;
//! it keeps the id and the join recognises it by kind. What a reporter
//! posts is one array of spans; what Zipkin's query API answers
//! (`/api/v2/traces`) is an array of traces, each an array of spans: both
//! are read. Spans in the v1 model (annotations) are read as the v2 spans
//! they stand for ([`zipkin_v1`]).

use super::{accept, failed_status, int, listed, zipkin_v1, Endpoint, Kind, Parsed, Span};
use serde_json::Value;

pub(super) fn read(doc: &Value, out: &mut Parsed) {
    let Some(spans) = doc.as_array() else {
        out.rejects.add("zipkin document is not an array");
        return;
    };
    for span in spans.iter().flat_map(spans_of).flat_map(zipkin_v1::as_v2) {
        let span = span.as_ref();
        let local = span.get("localEndpoint");
        let remote = span.get("remoteEndpoint");
        let kind = (span.get("kind").and_then(Value::as_str)).map_or(Kind::Other, Kind::named);
        let ips = |e: Option<&Value>| -> Vec<String> {
            ["ipv4", "ipv6"]
                .iter()
                .filter_map(|k| e?.get(k)?.as_str().map(str::to_owned))
                .collect()
        };
        // Zipkin names both ends itself: the local endpoint is the host
        // (where the reporter set its address), the remote one the peer (by
        // address, and by name for a callee that records no spans, a
        // database say); the conventions' other attributes are tags.
        let tags = span.get("tags");
        let endpoint = Endpoint::read(
            kind.side(),
            |k| {
                // OpenTelemetry's exporters add the resource's attributes
                // to the tags, an array flattened into text.
                let tagged = text(tags, k).map(|t| listed(&t)).unwrap_or_default();
                match k {
                    "host.ip" => ips(local).into_iter().chain(tagged).collect(),
                    _ => tagged,
                }
            },
            |k| match k {
                "network.peer.address" => ips(remote),
                "peer.service" => text(remote, "serviceName").into_iter().collect(),
                "server.port" => text(remote, "port").into_iter().collect(),
                _ => text(tags, k).into_iter().collect(),
            },
        );
        let s = (|| {
            let start = int(span.get("timestamp"))?;
            Some(Span {
                trace_id: span.get("traceId")?.as_str()?.to_ascii_lowercase(),
                span_id: span.get("id")?.as_str()?.to_ascii_lowercase(),
                parent_id: span
                    .get("parentId")
                    .and_then(Value::as_str)
                    .map(str::to_ascii_lowercase),
                service: local
                    .and_then(|l| l.get("serviceName")?.as_str())
                    .unwrap_or_default()
                    .to_owned(),
                kind,
                start_ns: start.checked_mul(1_000)?,
                end_ns: start
                    .checked_add(int(span.get("duration"))?)?
                    .checked_mul(1_000)?,
                endpoint,
                shared: span.get("shared").and_then(Value::as_bool).unwrap_or(false),
                // Zipkin marks a failed span by an `error` tag, whose value
                // is the message (empty for a status without one).
                error: tags.is_some_and(|t| t.get("error").is_some())
                    || text(tags, "otel.status_code").is_some_and(|c| failed_status(&c)),
            })
        })();
        accept(out, s, "missing id or timestamps");
    }
}

/// The spans an element of the top-level array holds: itself, or a
/// trace's spans.
fn spans_of(element: &Value) -> impl Iterator<Item = &Value> {
    match element {
        Value::Array(trace) => trace.iter(),
        span => std::slice::from_ref(span).iter(),
    }
}

/// A field of a Zipkin object as text (a port is a number).
fn text(v: Option<&Value>, key: &str) -> Option<String> {
    match v?.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
