//! The program's declarations, from their one home (`intpath-sr-int`).

pub use intpath_sr_int::schema::*;
