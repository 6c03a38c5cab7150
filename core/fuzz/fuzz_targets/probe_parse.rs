//! Any byte string must parse to a probe or to an error, never a panic, and a
//! probe that parses must emit back to the same bytes.
#![no_main]

use intpath_core::wire::ProbeRepr;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(probe) = ProbeRepr::parse(data) {
        let bytes = probe.to_bytes().expect("a parsed probe emits");
        // Emit normalises what parse ignores (IP identification, flags, UDP
        // checksum), so compare the re-parsed value, not the bytes.
        assert_eq!(ProbeRepr::parse(&bytes).expect("emitted probe parses"), probe);
    }
});
