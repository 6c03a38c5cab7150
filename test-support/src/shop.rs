//! The shop (`apps/shop`), eight Flask services traced only by the official
//! OpenTelemetry Python SDK, run whole on loopback by its own `run-local`:
//! the application we did not write, for the tests that must hold on it.

use crate::apps::RunLocal;
use serde_json::Value;

/// One `shop.py run-local` run.
#[derive(Debug, Clone)]
pub struct Shop<'a> {
    /// What every app's `run-local` takes (`fault`'s `database:…` slows
    /// inventory's queries).
    pub app: RunLocal<'a>,
    /// `SERVICE:AFTER_S:FOR_S`, as `run-local --freeze` takes it: the
    /// service's process stopped for a while.
    pub freeze: Option<&'a str>,
    /// A PostgreSQL URL inventory reads its stock from (`run-local --db`).
    pub db: Option<&'a str>,
    /// Extra `OTEL_*` settings (e.g. the semantic-convention opt-in).
    pub env: &'a [(&'a str, &'a str)],
}

/// Runs the shop to the end; its JSON report (ports, fault, load summary).
/// Panics with the shop's stderr when it fails or takes longer than the
/// load plus three minutes.
pub fn run(shop: &Shop<'_>) -> Value {
    let mut extra = Vec::new();
    if let Some(f) = shop.freeze {
        extra.extend(["--freeze".into(), f.into()]);
    }
    if let Some(db) = shop.db {
        extra.extend(["--db".into(), db.into()]);
    }
    shop.app.run("shop/shop.py", &extra, shop.env)
}
