//! Loading topology files of every format at 10^3..10^5 switches, cold: as
//! a command loads a file once in a fresh process, with nothing of it in the
//! cache. Each load runs in a new process of this bench, after the parent
//! has written over a buffer larger than the machine's caches; the child
//! times the load alone. A fresh heap matters: loads repeated in one
//! process reuse freed memory at 10^3 but get new pages from the kernel at
//! 10^5, which made per-element costs look less flat than a user sees.
//! Prints the median time per element (switches + links) of each format and
//! size.
//!
//!     cargo bench -p intpath-core --bench load_cold

mod common;

use intpath_core::topo::Topology;
use std::process::Command;
use std::time::Instant;

/// Larger than this machine's L2 and its share of the L3.
const EVICT: usize = 256 << 20;

/// The argument that makes this bench a child that loads one file.
const CHILD: &str = "--load-one";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == CHILD) {
        let spec = &args[i + 1];
        let start = Instant::now();
        let t = Topology::load(spec).expect("load");
        let took = start.elapsed().as_secs_f64();
        std::hint::black_box(&t);
        println!("{took}");
        return;
    }
    let me = std::env::current_exe().expect("path of this bench");
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
                    let out = Command::new(&me)
                        .args([CHILD, spec])
                        .output()
                        .expect("run a child load");
                    assert!(out.status.success(), "child load of {spec} failed");
                    let took: f64 = String::from_utf8_lossy(&out.stdout)
                        .trim()
                        .parse()
                        .expect("child prints seconds");
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
