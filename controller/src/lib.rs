//! The intpath planner: probe paths that cover every link of a topology
//! (`planner`), and the check that a plan really does (`check`). The
//! `intpath` binary wraps them, with the evaluation of the INT-path paper
//! (`eval`).

pub mod check;
pub mod demo;
pub mod eval;
pub mod failover;
pub mod planner;

pub use check::{check, CheckFailure, CheckOptions, CheckReport};
pub use planner::{plan, Algo, PlanError, PlanOptions};
