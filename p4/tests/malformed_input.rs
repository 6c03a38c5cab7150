//! Random, truncated and bit-flipped frames through the whole pipeline on
//! every port: nothing may panic, and every frame is either forwarded or
//! dropped (the counters must add up).

use intpath_sr_int::schema;
use intpath_switch::counters::Counters;
use intpath_switch::packet::PacketBuf;
use intpath_switch::pipeline::Pipeline;
use intpath_switch::vectors;
use std::path::PathBuf;

/// xorshift64*: deterministic, so a failure can be replayed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn mutated_frames_never_panic() {
    let file =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/ref_switch_basics.json");
    let vs = vectors::load(&file).unwrap();
    // Seeds: every input frame of the vectors, with the tables of each.
    let seeds: Vec<_> = vs
        .iter()
        .flat_map(|v| {
            let t = vectors::tables_for(v).unwrap();
            v.packets
                .iter()
                .map(move |p| (t.clone(), vectors::decode_hex(&p.data).unwrap()))
        })
        .collect();
    let pipeline = Pipeline::new(255);
    let counters = Counters::default();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut pkt = PacketBuf::new();
    let ports = [1u16, 2, 3, 255];
    let mut sent = 0u64;
    let mut forwarded = 0u64;
    for round in 0..40_000 {
        let (tables, seed) = &seeds[rng.below(seeds.len())];
        let mut frame = seed.clone();
        match round % 4 {
            0 => frame.truncate(rng.below(frame.len() + 1)),
            1 => {
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(frame.len());
                    frame[i] ^= 1 << rng.below(8);
                }
            }
            2 => {
                // Header fields that steer the parser: counts, flags, lengths.
                for at in [12, 16, 17, 23, 46, 47, 48, 49, 50, 51, 52, 53] {
                    if at < frame.len() && rng.below(3) == 0 {
                        frame[at] = rng.next() as u8;
                    }
                }
            }
            _ => {
                let n = rng.below(200);
                frame = (0..n).map(|_| rng.next() as u8).collect();
            }
        }
        if pkt.load(&frame).is_err() {
            continue;
        }
        sent += 1;
        let port = ports[rng.below(ports.len())];
        if pipeline
            .process(tables, &counters, &mut pkt, port, 7)
            .is_some()
        {
            forwarded += 1;
        }
    }
    let rx: u64 = (0..512)
        .map(|i| counters.read(schema::RX_PORT_COUNTER, i).unwrap().0)
        .sum();
    let tx: u64 = (0..512)
        .map(|i| counters.read(schema::TX_PORT_COUNTER, i).unwrap().0)
        .sum();
    assert_eq!(rx, sent);
    assert_eq!(tx, forwarded);
    let malformed = counters.read(schema::DROP_COUNTER, 0).unwrap().0;
    assert!(
        malformed > 1000,
        "only {malformed} of {sent} frames were malformed"
    );
    assert!(
        forwarded > 1000,
        "only {forwarded} of {sent} frames forwarded"
    );
}
