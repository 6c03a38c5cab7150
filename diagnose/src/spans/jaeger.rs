//! Jaeger JSON: the query API's `{"data":[trace…]}` or one trace object.
//! Times are µs; `span.kind` is a tag; the process carries `ip`/`hostname`
//! (Jaeger's clients) or the resource's attributes (OpenTelemetry's).

use super::{accept, failed_status, int, listed, Endpoint, Kind, Parsed, Span};
use serde_json::Value;

pub(super) fn read(doc: &Value, out: &mut Parsed) {
    let traces: Vec<&Value> = match doc.get("data").and_then(Value::as_array) {
        Some(d) => d.iter().collect(),
        None => vec![doc],
    };
    for t in traces {
        let processes = t.get("processes");
        let Some(spans) = t.get("spans").and_then(Value::as_array) else {
            out.rejects.add("trace without spans");
            continue;
        };
        for span in spans {
            let process = span
                .get("processID")
                .and_then(Value::as_str)
                .and_then(|p| processes?.get(p))
                .or_else(|| span.get("process"));
            let ptags = process.and_then(|p| p.get("tags"));
            let stags = span.get("tags");
            let kind = tag(stags, "span.kind").map_or(Kind::Other, |k| Kind::named(&k));
            // Jaeger clients put the host in the process's `ip` and
            // `hostname` tags, the peer in `peer.ipv4` (an integer in the
            // Java client) or the OpenTelemetry names.
            let endpoint = Endpoint::read(
                kind.side(),
                |k| {
                    // A process recorded by OpenTelemetry has its
                    // resource's own keys, arrays as JSON text.
                    let own = tag(ptags, k).map(|t| listed(&t)).unwrap_or_default();
                    let client = match k {
                        "host.ip" => tag(ptags, "ip"),
                        "host.name" => tag(ptags, "hostname"),
                        _ => None,
                    };
                    client.into_iter().chain(own).collect()
                },
                |k| {
                    let peer = ["peer.ipv4", "peer.ipv6", "peer.address"];
                    let v = tag(stags, k);
                    match (k, v) {
                        ("network.peer.address", None) => peer
                            .iter()
                            .find_map(|p| tag(stags, p))
                            .map(ipv4_int)
                            .into_iter()
                            .collect(),
                        (_, v) => v.into_iter().collect(),
                    }
                },
            );
            let s = (|| {
                let start = int(span.get("startTime"))?;
                let parent = span
                    .get("references")
                    .and_then(Value::as_array)
                    .and_then(|r| {
                        r.iter()
                            .find(|r| r.get("refType").and_then(Value::as_str) == Some("CHILD_OF"))
                    })
                    .and_then(|r| r.get("spanID")?.as_str())
                    .or_else(|| span.get("parentSpanID").and_then(Value::as_str))
                    .filter(|p| !p.trim_start_matches('0').is_empty());
                Some(Span {
                    trace_id: span.get("traceID")?.as_str()?.to_ascii_lowercase(),
                    span_id: span.get("spanID")?.as_str()?.to_ascii_lowercase(),
                    parent_id: parent.map(str::to_ascii_lowercase),
                    service: process
                        .and_then(|p| p.get("serviceName")?.as_str())
                        .unwrap_or_default()
                        .to_owned(),
                    kind,
                    start_ns: start.checked_mul(1_000)?,
                    end_ns: start
                        .checked_add(int(span.get("duration"))?)?
                        .checked_mul(1_000)?,
                    endpoint,
                    shared: false,
                    error: tag(stags, "error").is_some_and(|e| e == "true")
                        || tag(stags, "otel.status_code").is_some_and(|c| failed_status(&c)),
                })
            })();
            accept(out, s, "missing id or timestamps");
        }
    }
}

/// A tag's value as text (`[{key, type, value}]`).
fn tag(tags: Option<&Value>, key: &str) -> Option<String> {
    let v = tags?
        .as_array()?
        .iter()
        .find(|t| t.get("key").and_then(Value::as_str) == Some(key))?
        .get("value")?;
    match v {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// `peer.ipv4` as the Java client sends it, a 32-bit integer, as dotted
/// quads; any other text unchanged.
fn ipv4_int(v: String) -> String {
    match v.parse::<u32>() {
        Ok(n) => std::net::Ipv4Addr::from(n).to_string(),
        Err(_) => v,
    }
}
