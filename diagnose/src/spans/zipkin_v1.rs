//! Zipkin v1 JSON, what older Brave and Finagle reporters still post: one
//! span per RPC whose client and server halves are annotations (`cs`/`cr`
//! on the caller, `sr`/`ss` on the callee, each with its endpoint), the
//! peers' addresses as the `sa`/`ca` binary annotations and the tags as the
//! others. Each half becomes the v2 span it stands for, the server half
//! sharing the RPC's id, so the v2 reader reads both.

use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// Whether `span` is in the v1 model: annotations and no v2 endpoint.
pub(super) fn is_v1(span: &Value) -> bool {
    span.get("localEndpoint").is_none()
        && (span.get("annotations").is_some() || span.get("binaryAnnotations").is_some())
}

/// The v2 spans of a v1 span: a client and a server half where its
/// annotations record them, else one span on its first endpoint.
pub(super) fn as_v2(span: &Value) -> Vec<Cow<'_, Value>> {
    if !is_v1(span) {
        return vec![Cow::Borrowed(span)];
    }
    let notes: Vec<&Value> = list(span, "annotations").collect();
    let at = |v: &str| {
        notes
            .iter()
            .find(|a| a.get("value").and_then(Value::as_str) == Some(v))
    };
    let peer = |key: &str| {
        list(span, "binaryAnnotations")
            .find(|b| b.get("key").and_then(Value::as_str) == Some(key))
            .and_then(|b| b.get("endpoint"))
    };
    let mut tags = Map::new();
    for b in list(span, "binaryAnnotations") {
        if let (Some(k), Some(v)) = (b.get("key").and_then(Value::as_str), b.get("value")) {
            if !matches!(k, "sa" | "ca" | "lc") {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                tags.insert(k.to_owned(), Value::String(text));
            }
        }
    }
    let half = |begin: &str, end: &str, kind: &str, remote: &str| -> Option<Value> {
        let (b, e) = (at(begin)?, at(end)?);
        let start = b.get("timestamp")?.as_i64()?;
        let mut v = base(span, &tags);
        v["kind"] = json!(kind);
        v["timestamp"] = json!(start);
        v["duration"] = json!(e.get("timestamp")?.as_i64()? - start);
        v["localEndpoint"] = b.get("endpoint").cloned().unwrap_or(Value::Null);
        if let Some(r) = peer(remote) {
            v["remoteEndpoint"] = r.clone();
        }
        Some(v)
    };
    let mut out = Vec::new();
    if let Some(c) = half("cs", "cr", "CLIENT", "sa") {
        out.push(Cow::Owned(c));
    }
    if let Some(mut s) = half("sr", "ss", "SERVER", "ca") {
        s["shared"] = json!(true);
        out.push(Cow::Owned(s));
    }
    if out.is_empty() {
        let mut v = base(span, &tags);
        let endpoint = notes
            .first()
            .and_then(|a| a.get("endpoint"))
            .or_else(|| peer("lc"));
        v["localEndpoint"] = endpoint.cloned().unwrap_or(Value::Null);
        out.push(Cow::Owned(v));
    }
    out
}

/// The fields both halves keep: ids, name, the span's own times, tags.
fn base(span: &Value, tags: &Map<String, Value>) -> Value {
    let mut v = Map::new();
    for k in ["traceId", "id", "parentId", "name", "timestamp", "duration"] {
        if let Some(x) = span.get(k) {
            v.insert(k.to_owned(), x.clone());
        }
    }
    v.insert("tags".to_owned(), Value::Object(tags.clone()));
    Value::Object(v)
}

fn list<'a>(span: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    span.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}
