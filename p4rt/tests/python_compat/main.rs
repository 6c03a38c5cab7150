//! Our P4Runtime messages against the official Python bindings
//! (`pip install p4runtime`, done by scripts/install-deps.sh): compat.py
//! compares every descriptor, then samples cross in both directions.
//!
//! `messages` builds the message values, `samples` lists what crosses.

mod messages;
mod samples;

use intpath_p4rt::proto::FILE_DESCRIPTOR_SET;
use samples::samples;
use std::path::{Path, PathBuf};
use std::process::Command;

fn work_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("intpath-p4rt-compat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn matches_official_p4runtime_python_bindings() {
    let dir = work_dir();
    std::fs::write(dir.join("ours.desc"), FILE_DESCRIPTOR_SET).unwrap();
    let samples = samples();
    let manifest: Vec<String> = samples
        .iter()
        .map(|s| format!(r#"{{"name":"{}","type":"{}"}}"#, s.name, s.type_name))
        .collect();
    std::fs::write(
        dir.join("samples.json"),
        format!("[{}]", manifest.join(",")),
    )
    .unwrap();
    for s in &samples {
        std::fs::write(dir.join(format!("{}.bin", s.name)), &s.bytes).unwrap();
    }

    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&dir)
        .env("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'p4'"),
        "the official bindings are missing: run scripts/install-deps.sh (pip install p4runtime)"
    );
    assert!(
        out.status.success(),
        "compat.py found differences:\n{stdout}\n{stderr}"
    );
    println!("{stdout}");

    let failures: Vec<String> = samples
        .iter()
        .filter_map(|s| {
            let python = std::fs::read(dir.join(format!("{}.py.bin", s.name)))
                .map_err(|e| e.to_string())
                .and_then(|b| (s.check)(&b));
            python.err().map(|e| format!("sample {}: {e}", s.name))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    std::fs::remove_dir_all(&dir).ok();
}
