//! The collector's probe parser on any frame or packet-in: a probe or a
//! reject reason, never a panic; the three entry points agree.
#![no_main]

use intpath_collector::parse::{parse_frame, parse_packet_in};
use intpath_core::wire::{PacketIn, CPU_HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let frame = parse_frame(data, 0);
    if let Ok(probe) = &frame {
        // What parses as a frame parses the same behind a packet-in header.
        let mut pin = vec![0u8; CPU_HEADER_LEN];
        PacketIn::new_unchecked(&mut pin[..]).set_ingress_port(1);
        pin.extend_from_slice(data);
        assert_eq!(parse_packet_in(&pin, 0).as_ref(), Ok(probe));
    }
    let _ = parse_packet_in(data, 0);
});
