//! `--export-otlp URL`: the diagnosed spans sent on to an OTLP/HTTP
//! backend (Jaeger, Tempo, an OpenTelemetry Collector, intpath's own
//! receiver) with the diagnosis as attributes and events
//! (`intpath_diagnose::export`, which builds and posts them), so that it
//! shows next to the request.

use anyhow::{bail, Result};
use intpath_diagnose::export::{self, Client, Endpoint};
use intpath_diagnose::{Diagnosis, Request};

/// Reads the spans `req` names again and posts them with `d`'s findings
/// to `url`.
pub fn send(req: &Request, d: &Diagnosis, url: &Endpoint) -> Result<()> {
    let rt = super::super::runtime()?;
    let inputs = rt.block_on(intpath_diagnose::load(req))?;
    let ex = export::otlp(d, &inputs.spans.spans);
    if ex.skipped > 0 {
        tracing::warn!(
            "{} spans not exported: their ids are not OTLP's hexadecimal",
            ex.skipped
        );
    }
    let client = Client::new(url.clone())?;
    let sent = rt.block_on(client.send(ex.request))?;
    if sent.rejected > 0 {
        bail!(
            "{url}: the backend rejected {} of {} spans",
            sent.rejected,
            ex.spans
        );
    }
    eprintln!("exported {} diagnosed spans to {url}", ex.spans);
    Ok(())
}
