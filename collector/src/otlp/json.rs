//! Attribute lists, events and links as the JSON text the span tables hold,
//! written straight from `opentelemetry-proto`'s messages. Object keys come
//! out sorted (a repeated key keeps its last value), so equal resources make
//! equal text; the text is what `serde_json` would print for the same
//! object, without building a `serde_json::Value` tree per span first.

use base64::Engine;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::span::{Event, Link};

/// `[{key, value}]` as a JSON object.
pub fn attributes(kvs: &mut [KeyValue]) -> String {
    if kvs.is_empty() {
        return "{}".into();
    }
    let mut out = Vec::with_capacity(32 * kvs.len());
    object(&mut out, kvs);
    text(out)
}

/// `[{"attributes", "name", "time_ns"}, ...]`.
pub fn events(events: &mut [Event]) -> String {
    list(events, |out, e| {
        out.extend_from_slice(b"{\"attributes\":");
        object(out, &mut e.attributes);
        out.extend_from_slice(b",\"name\":");
        string(out, &e.name);
        out.extend_from_slice(b",\"time_ns\":");
        out.extend_from_slice(itoa::Buffer::new().format(e.time_unix_nano).as_bytes());
        out.push(b'}');
    })
}

/// `[{"attributes", "span_id", "trace_id", "trace_state"}, ...]`, ids in hex.
pub fn links(links: &mut [Link]) -> String {
    list(links, |out, l| {
        out.extend_from_slice(b"{\"attributes\":");
        object(out, &mut l.attributes);
        out.extend_from_slice(b",\"span_id\":");
        string(out, &const_hex::encode(&l.span_id));
        out.extend_from_slice(b",\"trace_id\":");
        string(out, &const_hex::encode(&l.trace_id));
        out.extend_from_slice(b",\"trace_state\":");
        string(out, &l.trace_state);
        out.push(b'}');
    })
}

fn list<T>(items: &mut [T], mut item: impl FnMut(&mut Vec<u8>, &mut T)) -> String {
    if items.is_empty() {
        return "[]".into();
    }
    let mut out = Vec::with_capacity(128 * items.len());
    out.push(b'[');
    for (i, it) in items.iter_mut().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        item(&mut out, it);
    }
    out.push(b']');
    text(out)
}

fn object(out: &mut Vec<u8>, kvs: &mut [KeyValue]) {
    // Stable: of equal keys, the one sent last stays last, and is kept.
    kvs.sort_by(|a, b| a.key.cmp(&b.key));
    out.push(b'{');
    let mut first = true;
    for i in 0..kvs.len() {
        if kvs.get(i + 1).is_some_and(|next| next.key == kvs[i].key) {
            continue;
        }
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        string(out, &kvs[i].key);
        out.push(b':');
        value(out, kvs[i].value.as_mut());
    }
    out.push(b'}');
}

fn value(out: &mut Vec<u8>, v: Option<&mut AnyValue>) {
    use any_value::Value as V;
    match v.and_then(|v| v.value.as_mut()) {
        None => out.extend_from_slice(b"null"),
        Some(V::StringValue(s)) => string(out, s),
        Some(V::BoolValue(b)) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Some(V::IntValue(i)) => out.extend_from_slice(itoa::Buffer::new().format(*i).as_bytes()),
        // JSON has no NaN or infinity: those keep their names as text.
        Some(V::DoubleValue(d)) if d.is_finite() => {
            serde_json::to_writer(&mut *out, d).expect("writing to memory")
        }
        Some(V::DoubleValue(d)) => string(out, &d.to_string()),
        Some(V::ArrayValue(a)) => {
            out.push(b'[');
            for (i, v) in a.values.iter_mut().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                value(out, Some(v));
            }
            out.push(b']');
        }
        Some(V::KvlistValue(l)) => object(out, &mut l.values),
        Some(V::BytesValue(b)) => {
            out.extend_from_slice(b"{\"bytesValue\":");
            string(out, &base64::engine::general_purpose::STANDARD.encode(b));
            out.push(b'}');
        }
        Some(V::StringValueStrindex(i)) => {
            out.extend_from_slice(b"{\"stringValueStrindex\":");
            out.extend_from_slice(itoa::Buffer::new().format(*i).as_bytes());
            out.push(b'}');
        }
    }
}

/// A JSON string literal, escaped as `serde_json` escapes it.
fn string(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect("writing to memory")
}

fn text(out: Vec<u8>) -> String {
    String::from_utf8(out).expect("JSON written from UTF-8 strings")
}

#[cfg(test)]
mod tests {
    use super::*;
    use any_value::Value as V;

    fn kv(key: &str, v: V) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue { value: Some(v) }),
            ..Default::default()
        }
    }

    #[test]
    fn keys_sorted_last_repeat_kept_text_escaped_and_odd_doubles_named() {
        let mut kvs = vec![
            kv("b", V::StringValue("first".into())),
            kv("a\"q", V::StringValue("tab\there \u{1}".into())),
            kv("b", V::StringValue("second".into())),
            kv("nan", V::DoubleValue(f64::NAN)),
            kv("tiny", V::DoubleValue(1e-300)),
            KeyValue {
                key: "none".into(),
                ..Default::default()
            },
        ];
        let got = attributes(&mut kvs);
        let want = serde_json::json!({
            "a\"q": "tab\there \u{1}", "b": "second", "nan": "NaN", "none": null, "tiny": 1e-300
        });
        assert_eq!(got, want.to_string());
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&got).unwrap(),
            want
        );
    }
}
