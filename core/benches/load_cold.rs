//! Loading topology files of every format at 10^3..10^5 switches, cold: as
//! a command loads a file once in a fresh process, with nothing of it in the
//! cache. Before each load the bench writes over a buffer larger than the
//! machine's caches; only the load itself is timed. Prints the median time
//! per element (switches + links) of each format and size.
//!
//!     cargo bench -p intpath-core --bench load_cold

mod common;

use intpath_core::topo::Topology;
use std::time::Instant;

/// Larger than this machine's L2 and its share of the L3.
const EVICT: usize = 256 << 20;

fn main() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut junk = vec![0u8; EVICT];
    println!("format    switches  median µs/element  (min–max of the runs)");
    for n in common::SIZES {
        let runs = if n >= 100_000 { 7 } else { 21 };
        let elements = common::elements(n) as f64;
        for (format, path) in common::write_files(dir.path(), n) {
            let spec = path.to_str().expect("utf-8 path");
            let mut per_element: Vec<f64> = (0..runs)
                .map(|run| {
                    for b in junk.iter_mut().step_by(64) {
                        *b = b.wrapping_add(run as u8 | 1);
                    }
                    let start = Instant::now();
                    let t = Topology::load(spec).expect("load");
                    let took = start.elapsed().as_secs_f64();
                    std::hint::black_box(&t);
                    took * 1e6 / elements
                })
                .collect();
            per_element.sort_by(f64::total_cmp);
            println!(
                "{format:<9} {n:>8}  {:>17.3}  ({:.3}–{:.3})",
                per_element[runs / 2],
                per_element[0],
                per_element[runs - 1]
            );
        }
    }
    std::hint::black_box(&junk);
}
