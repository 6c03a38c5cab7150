//! A HotelReservation-like microservice workload for intpath's live
//! diagnosis: six HTTP services (frontend → search → {geo, rate},
//! frontend → profile, frontend → reservation), each traced with the
//! OpenTelemetry SDK and exporting OTLP/HTTP, an injectable service delay,
//! and an open-loop Poisson load generator.

pub mod client;
pub mod config;
pub mod load;
pub mod server;
pub mod services;
pub mod telemetry;

pub use config::{ConfigError, Delay, Mix, Peers, RequestKind, Service};
pub use load::{LoadConfig, LoadError, Summary};
pub use server::{ServeConfig, ServeError, Server};
pub use telemetry::Export;
