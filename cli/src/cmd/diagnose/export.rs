//! `--export-otlp URL`: the diagnosed spans sent on to an OTLP/HTTP
//! backend (Jaeger, Tempo, an OpenTelemetry Collector, intpath's own
//! receiver) with the diagnosis as attributes and events
//! (`intpath_diagnose::export`), so that it shows next to the request.

use anyhow::{bail, Context, Result};
use intpath_diagnose::{export, Diagnosis, Request};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;

/// Spans per request: a few MB, under every backend's default body limit.
const SPANS_PER_REQUEST: usize = 2000;

/// The flag's value: `http://HOST:PORT` (the OTLP endpoint; `/v1/traces`
/// is added) or the full `…/v1/traces` URL.
pub fn traces_url(url: &str) -> Result<String, String> {
    if !url.starts_with("http://") {
        return Err(format!(
            "{url:?} is not an http:// URL of an OTLP/HTTP endpoint"
        ));
    }
    Ok(match url.trim_end_matches('/') {
        u if u.ends_with("/v1/traces") => u.to_owned(),
        u => format!("{u}/v1/traces"),
    })
}

/// Reads the spans `req` names again and posts them with `d`'s findings
/// to `url` (checked by [`traces_url`]).
pub fn send(req: &Request, d: &Diagnosis, url: &str) -> Result<()> {
    let rt = super::super::runtime()?;
    let inputs = rt.block_on(intpath_diagnose::load(req))?;
    let ex = export::otlp(d, &inputs.spans.spans);
    if ex.skipped > 0 {
        tracing::warn!(
            "{} spans not exported: their ids are not OTLP's hexadecimal",
            ex.skipped
        );
    }
    let client = reqwest::Client::new();
    let mut rejected = 0;
    for body in chunks(ex.request) {
        rejected += rt.block_on(post(&client, url, body.encode_to_vec()))?;
    }
    if rejected > 0 {
        bail!(
            "{url}: the backend rejected {rejected} of {} spans",
            ex.spans
        );
    }
    eprintln!("exported {} diagnosed spans to {url}", ex.spans);
    Ok(())
}

/// `req` split into requests of at most [`SPANS_PER_REQUEST`] spans.
fn chunks(req: ExportTraceServiceRequest) -> Vec<ExportTraceServiceRequest> {
    let mut out = Vec::new();
    for rs in req.resource_spans {
        for ss in &rs.scope_spans {
            for part in ss.spans.chunks(SPANS_PER_REQUEST) {
                let mut one = rs.clone();
                one.scope_spans = vec![opentelemetry_proto::tonic::trace::v1::ScopeSpans {
                    spans: part.to_vec(),
                    ..ss.clone()
                }];
                out.push(ExportTraceServiceRequest {
                    resource_spans: vec![one],
                });
            }
        }
    }
    out
}

/// Posts one protobuf request; the spans the backend rejected.
async fn post(client: &reqwest::Client, url: &str, body: Vec<u8>) -> Result<i64> {
    let resp = client
        .post(url)
        .header("content-type", "application/x-protobuf")
        .body(body)
        .send()
        .await
        .with_context(|| format!("{url}: cannot export"))?;
    let status = resp.status();
    let bytes = resp
        .bytes()
        .await
        .with_context(|| format!("{url}: no answer"))?;
    if !status.is_success() {
        bail!(
            "{url}: the backend answered {status}: {}",
            String::from_utf8_lossy(&bytes)
                .lines()
                .next()
                .unwrap_or_default()
        );
    }
    let answer = ExportTraceServiceResponse::decode(bytes.as_ref()).unwrap_or_default();
    Ok(answer.partial_success.map_or(0, |p| p.rejected_spans))
}
