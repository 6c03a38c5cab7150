//! Jaeger JSON: the query API's `{"data":[trace…]}` or one trace object.
//! Times are µs; `span.kind` is a tag; the process carries `ip`/`hostname`.

use super::{accept, int, Kind, Parsed, Span};
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
                    kind: match tag(span.get("tags"), "span.kind").as_deref() {
                        Some("client") => Kind::Client,
                        Some("server") => Kind::Server,
                        _ => Kind::Other,
                    },
                    start_ns: start.checked_mul(1_000)?,
                    end_ns: start
                        .checked_add(int(span.get("duration"))?)?
                        .checked_mul(1_000)?,
                    ip: tag(ptags, "ip").and_then(|s| s.parse().ok()),
                    hostname: tag(ptags, "hostname"),
                    shared: false,
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
