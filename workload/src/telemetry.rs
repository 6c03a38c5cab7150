//! One service's OpenTelemetry: an SDK tracer exporting OTLP/HTTP protobuf
//! in batches on the service's own Tokio runtime, and W3C trace context in
//! and out of HTTP headers.
//!
//! The resource names the service and the host address it serves on
//! (`host.ip`), which is what `intpath diagnose` matches against topology
//! hosts.

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{Context, KeyValue};
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use opentelemetry_sdk::trace::{BatchConfigBuilder, Sampler, SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::{runtime, Resource};
use std::net::IpAddr;
use std::time::Duration;

/// Where spans go.
#[derive(Debug, Clone, PartialEq)]
pub enum Export {
    /// OTLP/HTTP collector base URL, e.g. `http://127.0.0.1:4318`;
    /// spans are POSTed to `{base}/v1/traces`.
    Otlp(String),
    /// Spans are not recorded (sampler always off); context still flows, so
    /// the only difference to `Otlp` is the cost of tracing.
    Off,
}

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("OTLP exporter")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    #[error("flushing spans")]
    Shutdown(#[from] opentelemetry_sdk::error::OTelSdkError),
}

/// A service's tracer and propagator. Build it inside a Tokio runtime: the
/// batch exporter runs as a task on it.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    propagator: TraceContextPropagator,
}

impl Telemetry {
    pub fn new(service: &str, host_ip: IpAddr, export: &Export) -> Result<Self, TelemetryError> {
        let resource = Resource::builder()
            .with_service_name(service.to_owned())
            .with_attributes([
                KeyValue::new("host.ip", host_ip.to_string()),
                KeyValue::new("host.name", hostname()),
            ])
            .build();
        let builder = SdkTracerProvider::builder().with_resource(resource);
        let provider = match export {
            Export::Off => builder.with_sampler(Sampler::AlwaysOff).build(),
            Export::Otlp(base) => {
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(format!("{}/v1/traces", base.trim_end_matches('/')))
                    .with_timeout(Duration::from_secs(5))
                    .build()?;
                // Short delay and a deep queue: a load test's bursts are
                // exported within a second and not dropped.
                let config = BatchConfigBuilder::default()
                    .with_scheduled_delay(Duration::from_millis(200))
                    .with_max_queue_size(65_536)
                    .with_max_export_batch_size(1024)
                    .build();
                let processor = BatchSpanProcessor::builder(exporter, runtime::Tokio)
                    .with_batch_config(config)
                    .build();
                builder.with_span_processor(processor).build()
            }
        };
        let tracer = provider.tracer("intpath-workload");
        Ok(Telemetry {
            provider,
            tracer,
            propagator: TraceContextPropagator::new(),
        })
    }

    pub fn tracer(&self) -> &SdkTracer {
        &self.tracer
    }

    /// The caller's context from `traceparent`/`tracestate`, or an empty one.
    pub fn extract(&self, headers: &http::HeaderMap) -> Context {
        self.propagator.extract(&HeaderExtractor(headers))
    }

    /// Writes `cx`'s span into `traceparent`/`tracestate`.
    pub fn inject(&self, cx: &Context, headers: &mut http::HeaderMap) {
        self.propagator
            .inject_context(cx, &mut HeaderInjector(headers));
    }

    /// Exports what is queued and stops. Blocks: call off the runtime's
    /// worker threads (e.g. in `spawn_blocking`).
    pub fn shutdown(&self) -> Result<(), TelemetryError> {
        Ok(self.provider.shutdown()?)
    }
}

/// This machine's name, for the `host.name` resource attribute.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}
