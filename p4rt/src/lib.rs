//! A P4Runtime v1 client for any P4 program: the messages and service
//! (generated from our own `.proto` files), P4Info loading and name
//! resolution, canonical value encoding, a device session and table sync.
//! It knows no particular program, so the names a program declares come in
//! through its P4Info and nothing else.

pub mod bytes;
pub mod client;
pub mod p4info;
pub mod proto;
pub mod sync;
