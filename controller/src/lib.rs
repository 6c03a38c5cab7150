//! The intpath controller, as library calls: programming switches with a
//! plan and reading them back ([`deploy`]), and keeping the plan covering
//! the network while switches and links fail ([`watch`]). The `intpath`
//! command line maps its flags onto these typed requests; tests drive them
//! directly.

pub mod deploy;
pub mod watch;
