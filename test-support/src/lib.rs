//! Helpers every crate's tests share, so that each exists once:
//! [`switch`] starts reference switches (`intpath-switch` processes),
//! [`entries`] reads a switch's entries back by name,
//! [`fake_device`] is an in-process P4Runtime device that misbehaves on
//! request, [`netns`] is the network-namespace lab of the root-only tests
//! and [`probe_frames`] the sample probe they send; [`otlp`] posts traces
//! to the OTLP receiver; [`prometheus`] runs a real Prometheus that
//! scrapes the collector's `/metrics`; [`postgres`] hands out databases on
//! the test PostgreSQL server and runs one test body on both backends;
//! [`rng`] is the seeded generator of the fuzz-style tests; [`pcap`] writes
//! capture files and [`latency_lab`] runs and captures real request/response
//! traffic with known latencies (the Pirate tests); [`telemetry`] fills a
//! telemetry database through the collector's real pipeline; [`shop`] runs
//! the Python application we did not write (`apps/shop`); [`daemon`] stops
//! a daemon the moment it listens. Dev-only: never a dependency of a
//! library or binary.

pub mod daemon;
pub mod entries;
pub mod fake_device;
pub mod latency_lab;
pub mod netns;
pub mod otlp;
pub mod pcap;
pub mod postgres;
pub mod probe_frames;
pub mod prometheus;
pub mod rng;
pub mod shop;
pub mod switch;
pub mod tcpdump;
pub mod telemetry;
pub mod tls;

pub use tempfile::{tempdir, TempDir};

/// A loopback address nothing listens on (just freed).
pub fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    l.local_addr().expect("bound address").to_string()
}
