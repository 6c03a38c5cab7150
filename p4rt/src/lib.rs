//! P4Runtime for intpath: the v1 messages and service (generated from our
//! own `.proto` files), P4Info loading and name resolution, canonical value
//! encoding, and the client the controller uses to program switches.

pub mod bytes;
pub mod client;
pub mod p4info;
pub mod proto;
pub mod sync;
