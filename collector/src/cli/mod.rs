//! The `intpath-collector` command line: clap flags mapped onto the
//! library's typed calls.

pub mod collect;
pub mod receive;
pub mod serve;
