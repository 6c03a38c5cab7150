//! Definitions every intpath component must agree on.
//!
//! The switch, the controller, the probe generator and the collector all speak
//! the SR-INT wire format ([`wire`]), and all read the same topology and plan
//! files. Keeping a single definition here is what keeps them in lock-step.

#![warn(missing_docs)]

pub mod link;
pub mod logging;
pub mod plan;
pub mod routes;
pub mod sessions;
#[cfg(feature = "shutdown")]
pub mod shutdown;
pub mod switch_map;
pub mod time;
pub mod topo;
pub mod wire;
