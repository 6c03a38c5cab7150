//! `intpath serve`: the telemetry store and the diagnosis as a live web
//! page, served by intpath itself.
//!
//! The page (`assets/`: plain HTML, JavaScript and CSS, drawn by hand in
//! SVG) is compiled into the binary, so it loads with no network and no
//! Node toolchain. Behind it a small JSON API ([`api`]) answers from the
//! store's own readers (`intpath_store::query` and `samples`, SQLite and
//! PostgreSQL alike) and from `intpath_diagnose`'s `load` and `analyze`;
//! [`api::live`] pushes the newest run's heatmap every second as
//! server-sent events while a collector writes. Nothing here writes: the
//! store is opened read-only, and only once it exists, so the server may
//! start before the collector that creates the database.

pub mod api;
mod assets;
mod config;
mod server;
mod state;

pub use config::{ServeConfig, DEFAULT_LISTEN};
pub use server::{Server, WebError};
