//! What the tests of diagnoses share: the synthetic workload written and
//! the diagnosis run, each blocking, and the first culprit named.

#![allow(dead_code)]

use intpath_diagnose::culprits::{Culprit, Method};
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

/// The culprits named, and the first of them; a failure says what was
/// tested when nothing was named.
pub fn named_first(d: &Diagnosis) -> (Vec<Culprit>, Culprit) {
    let named = d.culprits(Method::Diagnose);
    let first = named.first().cloned().unwrap_or_else(|| {
        panic!(
            "nothing named; tested: {:?}",
            &d.tested()[..3.min(d.tested().len())]
        )
    });
    (named, first)
}
