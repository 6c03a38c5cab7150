//! What the tests of diagnoses on synthetic workloads share: the workload
//! written and the diagnosis run, each blocking.

#![allow(dead_code)]

use intpath_diagnose::{DiagnoseError, Diagnosis, Options, Request};
use intpath_eval::synth::{Config, SynthError, Truth};

/// Writes the workload `cfg` describes.
pub fn generate(cfg: &Config) -> Result<Truth, SynthError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(intpath_eval::synth::generate(cfg))
}

/// Diagnoses `req` with default options.
pub fn diagnose(req: Request) -> Result<Diagnosis, DiagnoseError> {
    intpath_diagnose::run(&req, &Options::default())
}
