//! The intpath reference switch: `sr_int.p4` executed in Rust.
//!
//! [`pipeline`] is the program (parser, controls, deparser) as a pure
//! function over [`tables`] and [`counters`]; the binary adds egress queues,
//! frame I/O on interfaces and a P4Runtime server around it.

pub mod admin;
pub mod counters;
mod datapath;
pub mod delay;
pub mod io;
pub mod loss;
pub mod p4info_map;
pub mod packet;
pub mod ping_policy;
pub mod pipeline;
pub mod queue;
pub mod server;
pub mod switch;
pub mod tables;
pub mod vectors;
