//! The reference switch's pipeline on any frame from a host port or the CPU
//! port: forwarded or dropped, never a panic; a well-formed probe that is
//! forwarded is still a well-formed probe.
#![no_main]

use intpath_core::wire::{ProbeRepr, CPU_HEADER_LEN};
use intpath_switch::counters::Counters;
use intpath_switch::packet::PacketBuf;
use intpath_switch::pipeline::Pipeline;
use intpath_switch::tables::Tables;
use intpath_switch::vectors;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const CPU_PORT: u16 = 255;

/// Every table entry of every shared vector that fits beside the others.
fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/tests/vectors");
        let mut tables = Tables::default();
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .expect("p4/tests/vectors")
            .map(|e| e.expect("dir entry").path())
            .collect();
        paths.sort();
        for v in paths.iter().flat_map(|p| vectors::load(p).expect("vector file")) {
            for e in &v.entries {
                if let Ok((op, entry)) = e.to_write() {
                    let _ = tables.apply(op, entry);
                }
            }
        }
        tables
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, frame)) = data.split_first() else {
        return;
    };
    let in_port = if selector & 1 == 1 { CPU_PORT } else { u16::from(selector >> 1) };
    let Ok(mut pkt) = PacketBuf::from_frame(frame) else {
        return;
    };
    let pipeline = Pipeline::new(CPU_PORT);
    let counters = Counters::default();
    let Some(port) = pipeline.process(tables(), &counters, &mut pkt, in_port, 1_000) else {
        return;
    };
    let input_probe = in_port != CPU_PORT && ProbeRepr::parse(frame).is_ok();
    if input_probe {
        let out = if port == CPU_PORT { &pkt.data()[CPU_HEADER_LEN..] } else { pkt.data() };
        ProbeRepr::parse(out).expect("a forwarded probe stays well-formed");
    }
});
