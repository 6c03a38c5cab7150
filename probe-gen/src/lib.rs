//! Probe and background-traffic injection at controlled rates.
//!
//! The pieces are independent so the binary, the tests and the benchmark can
//! combine them: a [`schedule::Schedule`] says *when* each packet is due, a
//! [`frames::FrameSource`] says *what* it holds, a [`transport::Transport`]
//! says *where* it goes, and [`sender::run`] drives the three against the
//! clock. [`config`] holds a run's typed request, [`inject`] one paced run
//! through an interface or a switch, [`send`] the probes of a plan (and of
//! each new plan while following the plan file).

pub mod clock;
pub mod config;
pub mod destinations;
pub mod frames;
pub mod inject;
pub mod schedule;
pub mod selection;
pub mod send;
pub mod sender;
pub mod stats;
pub mod transport;
