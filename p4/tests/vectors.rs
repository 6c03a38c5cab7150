//! Every packet test vector in `tests/vectors/` through the pipeline.

use intpath_switch::vectors;
use std::path::PathBuf;

#[test]
fn every_vector_file_passes() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/vectors exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vector files in {}", dir.display());
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in &files {
        match vectors::load(file) {
            Ok(vs) => {
                for v in vs {
                    ran += 1;
                    if let Err(e) = vectors::run(&v) {
                        failures.push(format!("{}: {e}", file.display()));
                    }
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{ran} vectors from {} files passed", files.len());
}

#[test]
fn a_wrong_expectation_is_reported() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/ref_switch_basics.json");
    let mut vs = vectors::load(&dir).unwrap();
    let v = &mut vs[0];
    let last = v.expect[0].data.len() - 1;
    // Flip the last nibble of the payload: the comparison must notice.
    let flipped = if v.expect[0].data.ends_with('0') {
        "1"
    } else {
        "0"
    };
    v.expect[0].data.replace_range(last.., flipped);
    let err = vectors::run(v).unwrap_err().to_string();
    assert!(err.contains("differ"), "{err}");
}
