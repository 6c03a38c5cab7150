//! intpath's evaluations, regenerated: [`paper`] is the INT-path paper's
//! planning figures (one CSV and one PNG each); [`traces`] runs the
//! trace-diagnosis and reconstruction matrices of `intpath-diagnose` and
//! says what they found, as `intpath eval diagnose` and `intpath eval
//! reconstruct` print it.

pub mod paper;
pub mod traces;
