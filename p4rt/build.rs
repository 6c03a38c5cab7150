//! Compiles our P4Runtime `.proto` files with `protox` (pure Rust, so no
//! protoc is needed or downloaded) and keeps the descriptor set for
//! `prost-reflect` (P4Info text format) and the compatibility test.

use std::path::PathBuf;

const PROTOS: &[&str] = &[
    "p4/v1/p4runtime.proto",
    "p4/config/v1/p4info.proto",
    "google/rpc/code.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(PROTOS, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("p4runtime_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
