//! Span files as they are left on disk, turned into the text the JSON
//! readers take. Besides plain JSON (one document or JSON Lines) that is a
//! gzipped file (a trace store's download, a rotated export) and what the
//! OpenTelemetry Collector's file exporter writes with `format: proto` or
//! `compression: zstd`: each message behind its length (4 bytes, big
//! endian), zstd-compressed or not, OTLP protobuf or OTLP JSON; or, under
//! its native-compression gate, the whole file one zstd stream of JSON
//! lines or of such frames. A saved OTLP/HTTP protobuf body reads too. A
//! protobuf message becomes the OTLP JSON it stands for, one per line.
//!
//! A file cut short (a killed exporter, a full disk) gives what it held
//! before the cut, as a plain file cut short does ([`super::salvage`] then
//! keeps its whole spans).

use super::otlp_proto;
use opentelemetry_proto::tonic::trace::v1::TracesData;
use prost::Message;
use std::io::{Error, ErrorKind, Read};
use std::path::Path;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The text of the span file at `path`.
pub fn read_file(path: &Path) -> std::io::Result<String> {
    let raw = std::fs::read(path)?;
    let name = path.display();
    let bytes = if raw.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::new();
        match flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut out) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                tracing::warn!("{name}: gzip stream cut short after {} bytes", out.len());
            }
            Err(e) => return Err(Error::new(e.kind(), format!("gzip: {e}"))),
        }
        out
    } else if raw.starts_with(&ZSTD_MAGIC) {
        let (out, cut) = unzstd(&raw);
        if let Some(e) = cut {
            tracing::warn!("{name}: zstd stream broken after {} bytes: {e}", out.len());
        }
        out
    } else {
        raw
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            framed(&bytes, &name.to_string())
                .or_else(|| protobuf_line(&bytes))
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidData,
                        format!(
                            "not text at byte {at}, nor OTLP protobuf or the OpenTelemetry \
                             Collector file exporter's frames (span files are JSON, plain, \
                             gzipped or zstd-compressed)"
                        ),
                    )
                })
        }
    }
}

/// Every zstd frame of `bytes` decompressed, and why decoding stopped
/// early if it did.
fn unzstd(mut bytes: &[u8]) -> (Vec<u8>, Option<String>) {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let mut decoder = match ruzstd::decoding::StreamingDecoder::new(&mut bytes) {
            Ok(d) => d,
            Err(e) => return (out, Some(e.to_string())),
        };
        if let Err(e) = decoder.read_to_end(&mut out) {
            return (out, Some(e.to_string()));
        }
    }
    (out, None)
}

/// The messages of a file of length-prefixed frames, one per line; `None`
/// when the first frame is not one (its length overruns the file, or it
/// holds neither OTLP JSON nor OTLP protobuf). A later frame that is cut
/// or broken ends the reading with a warning, the frames before it kept.
fn framed(mut bytes: &[u8], name: &str) -> Option<String> {
    let mut out = String::new();
    let mut frames = 0;
    while !bytes.is_empty() {
        let line = bytes
            .split_first_chunk::<4>()
            .and_then(|(len, rest)| rest.get(..u32::from_be_bytes(*len) as usize))
            .and_then(|body| Some((body.len(), frame_line(body)?)));
        match line {
            Some((len, line)) => {
                out.push_str(&line);
                out.push('\n');
                bytes = &bytes[4 + len..];
                frames += 1;
            }
            None if frames == 0 => return None,
            None => {
                tracing::warn!(
                    "{name}: frame {} cut short or unreadable; {frames} frames read before it",
                    frames + 1
                );
                break;
            }
        }
    }
    (frames > 0).then_some(out)
}

/// One frame's message as a line of OTLP JSON.
fn frame_line(body: &[u8]) -> Option<String> {
    let body = if body.starts_with(&ZSTD_MAGIC) {
        match unzstd(body) {
            (text, None) => text,
            (_, Some(_)) => return None,
        }
    } else {
        body.to_vec()
    };
    match String::from_utf8(body) {
        Ok(text) if text.trim_start().starts_with('{') => Some(text.replace('\n', " ")),
        Ok(text) => protobuf_line(text.as_bytes()),
        Err(e) => protobuf_line(e.as_bytes()),
    }
}

/// An OTLP protobuf message (`TracesData`, or the export request, whose
/// field is the same) as a line of OTLP JSON; `None` unless it decodes and
/// holds a span, so that other binary data is not taken for an empty one.
fn protobuf_line(bytes: &[u8]) -> Option<String> {
    let data = TracesData::decode(bytes).ok()?;
    let spans = data
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .map(|s| s.spans.len())
        .sum::<usize>();
    (spans > 0).then(|| otlp_proto::to_json(&data).to_string())
}
