//! The shared test vectors against `intpath_core`'s parser.

use intpath_core::wire::*;
use std::path::PathBuf;

/// The vectors are built by an independent Python re-implementation of the
/// wire format; intpath_core must read every probe they expect a switch to
/// emit, and refuse every probe the malformed vectors feed in.
#[test]
fn vector_probes_agree_with_core_parser() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let is_probe = |f: &[u8]| {
        f.len() >= 42
            && f[12..14] == [8, 0]
            && f[23] == IP_PROTO_UDP
            && f[36..38] == SRINT_UDP_PORT.to_be_bytes()
    };
    let (mut good, mut bad) = (0, 0);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/vectors")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("vector file");
        let json: serde_json::Value = serde_json::from_str(&text).expect("vector JSON");
        let vectors = match json.get("vectors") {
            Some(v) => v.as_array().expect("vectors array").clone(),
            None => vec![json],
        };
        for v in vectors {
            let name = v["name"].as_str().expect("name");
            let cpu = v["cpu_port"].as_u64().unwrap_or(255);
            let frame = |p: &serde_json::Value| {
                let hex = p["data"].as_str().expect("data");
                let bytes: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                    .collect();
                let skip = if p["port"].as_u64() == Some(cpu) {
                    CPU_HEADER_LEN
                } else {
                    0
                };
                bytes[skip..].to_vec()
            };
            for out in v["expect"].as_array().expect("expect") {
                let f = frame(out);
                if is_probe(&f) {
                    ProbeRepr::parse(&f)
                        .unwrap_or_else(|e| panic!("{name}: expected probe unreadable: {e}"));
                    good += 1;
                }
            }
            if name.starts_with("malformed_") {
                for input in v["packets"].as_array().expect("packets") {
                    let f = frame(input);
                    assert!(
                        ProbeRepr::parse(&f).is_err(),
                        "{name}: core accepts a malformed probe"
                    );
                    bad += 1;
                }
            }
        }
    }
    assert!(
        good >= 10 && bad >= 5,
        "too few probes checked: {good} good, {bad} bad"
    );
}
