//! Lock-step between `sr_int.p4`, its P4Info, `intpath_core::wire` and the
//! reference switch's pipeline schema.
//!
//! No p4c exists where CI runs, so nothing else would notice the P4 program and
//! the Rust side drifting apart. This test reads the P4 source with a small
//! purpose-built parser (headers, structs, constants, controls with their
//! actions, tables and counters), reads the P4Info text format with another,
//! and checks that the three descriptions of the pipeline say the same thing:
//! names, bit widths, match kinds, sizes, ids and byte layouts.
//!
//! `p4_source` and `p4info_text` are the two readers (over `tokens`); each
//! other module checks one pair of descriptions.

mod p4_source;
mod p4info_text;
mod tokens;

mod p4_vs_core;
mod p4_vs_p4info;
mod switch_schema;
mod vectors;
