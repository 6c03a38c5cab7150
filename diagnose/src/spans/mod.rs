//! Spans in, from the formats users already export: OpenTelemetry OTLP JSON,
//! Jaeger JSON, Zipkin v2 JSON and the SDKs' console exporters' JSON, all
//! reduced to one [`Span`]; and from the rows the collector's OTLP receiver
//! stored ([`from_store`]).
//!
//! Our own serde-free readers over `serde_json::Value` rather than
//! `opentelemetry-proto`'s generated types: those need prost and tonic for a
//! dozen fields, and real exports mix string and number nanos, integer and
//! string kinds, which a tolerant reader takes in one place.

mod console;
mod endpoint;
mod file;
mod jaeger;
mod otlp;
mod otlp_proto;
mod salvage;
mod stored;
mod unkinded;
mod zipkin;
mod zipkin_v1;

pub use endpoint::{keys_looked_for, listed, parse_ip, Endpoint, Side};
pub use file::read_file;
pub use stored::from_store;

use crate::rejects::Rejects;
use serde_json::Value;

/// Which side of an RPC or a message a span records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Client,
    Server,
    /// Sent a message (Kafka, RabbitMQ, a job queue) and did not wait for
    /// its handling.
    Producer,
    /// Handled a message: its service's work, with no caller waiting.
    Consumer,
    Other,
}

impl Kind {
    /// The kind a format's name says: OTLP's `SPAN_KIND_SERVER`, Jaeger's
    /// `server`, Zipkin's `SERVER`; anything else is [`Kind::Other`].
    pub fn named(name: &str) -> Kind {
        let name = name.strip_prefix("SPAN_KIND_").unwrap_or(name);
        [
            ("client", Kind::Client),
            ("server", Kind::Server),
            ("producer", Kind::Producer),
            ("consumer", Kind::Consumer),
        ]
        .into_iter()
        .find(|(n, _)| name.eq_ignore_ascii_case(n))
        .map_or(Kind::Other, |(_, k)| k)
    }

    /// The side whose attributes name the peer. A producer and a consumer
    /// are both the broker's clients: `server.address` is the broker.
    pub fn side(self) -> Side {
        match self {
            Kind::Client | Kind::Producer | Kind::Consumer => Side::Client,
            Kind::Server => Side::Server,
            Kind::Other => Side::Other,
        }
    }
}

/// One span, whatever format it came in. Times are ns on the clock of the
/// host that recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    pub parent_id: Option<String>,
    pub service: String,
    pub kind: Kind,
    pub start_ns: i64,
    pub end_ns: i64,
    /// Where it was recorded and whom it talked to, as its attributes say.
    pub endpoint: Endpoint,
    /// Zipkin's `shared`: a server span that reuses its client's id.
    pub shared: bool,
    /// Its status says it failed (OTLP's `STATUS_CODE_ERROR`, the `error`
    /// tag of Jaeger and Zipkin, `otel.status_code` `ERROR`): a call that
    /// was answered, but with a failure.
    pub error: bool,
}

/// The span formats we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Otlp,
    Jaeger,
    Zipkin,
    /// Python's `ConsoleSpanExporter`, Go's `stdouttrace`.
    Console,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "otlp" => Ok(Format::Otlp),
            "jaeger" => Ok(Format::Jaeger),
            "zipkin" => Ok(Format::Zipkin),
            "console" => Ok(Format::Console),
            _ => Err(format!(
                "unknown span format {s:?} (otlp, jaeger, zipkin, console)"
            )),
        }
    }
}

/// Why spans could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum SpansError {
    #[error(
        "unknown span format (top-level keys seen: {0}); pass --trace-format otlp|jaeger|zipkin|console"
    )]
    UnknownFormat(String),
    #[error("no JSON value in the input")]
    Empty,
}

/// Spans read from one input, with what was dropped and why.
#[derive(Debug, Default)]
pub struct Parsed {
    pub spans: Vec<Span>,
    pub rejects: Rejects,
}

/// Reads `text`: one JSON document or JSON Lines (one document per line),
/// each in `format` or, for `None`, the format its content shows. A broken
/// document is counted with its byte offset, its spans written whole before
/// the break are read ([`salvage`]), and reading resumes at the next line
/// that starts a document.
pub fn parse(text: &str, format: Option<Format>) -> Result<Parsed, SpansError> {
    let mut out = Parsed::default();
    let mut docs = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        let mut it = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match it.next() {
            None => break,
            Some(Ok(v)) => {
                docs.push(v);
                pos += it.byte_offset();
            }
            Some(Err(e)) => {
                let at = pos + offset_of(rest, e.line(), e.column());
                match salvage::cut(&text[pos..at]).and_then(|t| serde_json::from_str(&t).ok()) {
                    Some(kept) => {
                        docs.push(kept);
                        out.rejects
                            .add_with("document broken off, spans before it read", || {
                                format!("byte {at}: {e}")
                            });
                    }
                    None => out
                        .rejects
                        .add_with("bad JSON", || format!("byte {at}: {e}")),
                }
                // Resume after the line the broken document started on.
                let start = pos + (rest.len() - rest.trim_start().len());
                match next_document(text, start) {
                    Some(next) => pos = next,
                    None => break,
                }
            }
        }
    }
    finish(docs, format, out)
}

/// Byte offset of serde_json's 1-based line and column in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column.saturating_sub(1)).min(text.len())
}

/// The first line after the one holding `at` that starts with `{` or `[`:
/// where the next JSON Lines document begins.
fn next_document(text: &str, at: usize) -> Option<usize> {
    let mut pos = at + text[at..].find('\n')? + 1;
    for line in text[pos..].split_inclusive('\n') {
        if line.starts_with('{') || line.starts_with('[') {
            return Some(pos);
        }
        pos += line.len();
    }
    None
}

fn finish(docs: Vec<Value>, format: Option<Format>, mut out: Parsed) -> Result<Parsed, SpansError> {
    if docs.is_empty() && out.rejects.total() == 0 {
        return Err(SpansError::Empty);
    }
    // A document of no known shape among known ones (a stray log record in
    // a JSON Lines file) is a reject; the input fails only when no document
    // has a shape we read.
    let detected: Vec<Result<Format, SpansError>> = docs
        .iter()
        .map(|doc| format.map_or_else(|| detect(doc), Ok))
        .collect();
    if detected.iter().all(Result::is_err) {
        return match detected.into_iter().next() {
            Some(Err(e)) => Err(e),
            _ => Ok(out),
        };
    }
    for (doc, f) in docs.iter().zip(detected) {
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                let seen = match e {
                    SpansError::UnknownFormat(keys) => format!("top-level keys seen: {keys}"),
                    e => e.to_string(),
                };
                out.rejects.add_with("document of unknown format", || seen);
                continue;
            }
        };
        match f {
            Format::Otlp => otlp::read(doc, &mut out),
            Format::Jaeger => jaeger::read(doc, &mut out),
            Format::Zipkin => zipkin::read(doc, &mut out),
            Format::Console => console::read(doc, &mut out),
        }
    }
    unkinded::infer(&mut out.spans);
    Ok(out)
}

/// The OTLP document inside a trace store's answer (Tempo v2's `trace`,
/// Jaeger API v3's `result`), or the document itself.
fn unwrapped(doc: &Value) -> &Value {
    ["trace", "result"]
        .iter()
        .find_map(|k| doc.get(k))
        .unwrap_or(doc)
}

/// The format a document's shape shows.
pub fn detect(doc: &Value) -> Result<Format, SpansError> {
    let has = |v: &Value, k: &str| v.get(k).is_some();
    let inner = unwrapped(doc);
    if ["resourceSpans", "resource_spans", "batches"]
        .iter()
        .any(|k| has(inner, k))
    {
        return Ok(Format::Otlp);
    }
    if has(doc, "data") || (has(doc, "traceID") && has(doc, "spans")) {
        return Ok(Format::Jaeger);
    }
    if console::is_console(doc) {
        return Ok(Format::Console);
    }
    // A reporter's array of spans, or the query API's array of traces.
    let first_span = doc.as_array().and_then(|a| a.first()).map(|first| {
        first
            .as_array()
            .and_then(|trace| trace.first())
            .unwrap_or(first)
    });
    if let Some(first) = first_span {
        if has(first, "traceId")
            && ["localEndpoint", "timestamp", "annotations"]
                .iter()
                .any(|k| has(first, k))
        {
            return Ok(Format::Zipkin);
        }
    }
    let keys = match doc {
        Value::Object(m) => m.keys().take(8).cloned().collect::<Vec<_>>().join(", "),
        Value::Array(a) => format!("an array of {}", a.len()),
        _ => "a scalar".into(),
    };
    Err(SpansError::UnknownFormat(keys))
}

/// An integer from a JSON number or a decimal string (OTLP allows both).
pub(crate) fn int(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_u64().map(|u| u as i64)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Whether a status as text is the failed one: OpenTelemetry's `ERROR`
/// as the SDKs and exporters spell it (`ERROR`, `Error`,
/// `STATUS_CODE_ERROR`, the code 2).
pub(crate) fn failed_status(status: &str) -> bool {
    let s = status.trim();
    s.eq_ignore_ascii_case("error") || s.eq_ignore_ascii_case("status_code_error") || s == "2"
}

/// Checks the parts every format shares and keeps the span or counts why not.
pub(crate) fn accept(out: &mut Parsed, s: Option<Span>, missing: &'static str) {
    match s {
        None => out.rejects.add(missing),
        Some(s) if s.trace_id.is_empty() || s.span_id.is_empty() => out.rejects.add("missing id"),
        Some(s) if s.end_ns < s.start_ns => out.rejects.add("end before start"),
        Some(s) => out.spans.push(s),
    }
}
