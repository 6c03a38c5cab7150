//! What can be kept of a trace document that breaks off: an exporter
//! killed mid-write, a full disk, a download cut short. Every span that
//! was written whole before the break is still a span; the document is cut
//! after the last one and its open brackets closed.

/// `text` up to the end of its last complete span, with the brackets
/// still open there closed, or `None` when no span ended before the break.
///
/// A span is an object in an array under the key `spans` (OTLP's
/// `scopeSpans[].spans`, Jaeger's `data[].spans`) or in a top-level array
/// (Zipkin). Cutting anywhere else could keep a span without its end time
/// or with half its attributes, which reads as a different span.
pub fn cut(text: &str) -> Option<String> {
    let b = text.as_bytes();
    // Open containers: (closing byte, whose elements are spans).
    let mut open: Vec<(u8, bool)> = Vec::new();
    let mut last_string: &[u8] = &[];
    let mut key: &[u8] = &[];
    let mut best: Option<(usize, Vec<(u8, bool)>)> = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i + 1;
                i = start;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    break;
                }
                last_string = &b[start..i];
            }
            b':' => key = last_string,
            b'[' => {
                let spans = open.is_empty() || (open.last()?.0 == b'}' && key == b"spans");
                open.push((b']', spans));
            }
            b'{' => open.push((b'}', false)),
            c @ (b']' | b'}') => {
                if open.pop().map(|(close, _)| close) != Some(c) {
                    return None;
                }
                if c == b'}' && open.last().is_some_and(|&(_, spans)| spans) {
                    best = Some((i + 1, open.clone()));
                }
            }
            _ => {}
        }
        i += 1;
    }
    let (end, open) = best?;
    let mut out = String::with_capacity(end + open.len());
    out.push_str(&text[..end]);
    out.extend(open.iter().rev().map(|&(close, _)| char::from(close)));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn an_otlp_document_is_cut_after_its_last_whole_span() {
        let whole = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"a]}"}}]},"scopeSpans":[{"spans":[{"spanId":"1","attributes":[{"key":"k"}]},{"spanId":"2","name":"x\"}"}]}]}]}"#;
        // Broken inside span 2's name: span 1 stays, whole.
        let at = whole.find(r#"x\""#).unwrap() + 2;
        let kept = cut(&whole[..at]).unwrap();
        let v: serde_json::Value = serde_json::from_str(&kept).unwrap();
        let spans = &v["resourceSpans"][0]["scopeSpans"][0]["spans"];
        assert_eq!(spans.as_array().unwrap().len(), 1);
        assert_eq!(spans[0]["attributes"][0]["key"], "k");
        assert_eq!(
            v["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"],
            "a]}"
        );
        // Broken inside span 1's attributes: nothing whole to keep.
        let at = whole.find(r#"{"key":"k""#).unwrap() + 4;
        assert_eq!(cut(&whole[..at]), None);
    }

    #[test]
    fn zipkin_and_jaeger_documents_keep_their_whole_spans() {
        let zipkin = r#"[{"id":"1","tags":{"a":"b"}},{"id":"2","tags":{"a"#;
        let v: serde_json::Value = serde_json::from_str(&cut(zipkin).unwrap()).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 1);
        let jaeger = r#"{"data":[{"traceID":"t","spans":[{"spanID":"1"},{"spanID":"2"},{"span"#;
        let v: serde_json::Value = serde_json::from_str(&cut(jaeger).unwrap()).unwrap();
        assert_eq!(v["data"][0]["spans"].as_array().unwrap().len(), 2);
    }
}
