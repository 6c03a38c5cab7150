//! What the `intpath` command runs besides planning (which is
//! `intpath-planner`): programming switches with a plan (`deploy`), keeping
//! coverage under failure (`failover`), the INT-path paper's evaluation
//! (`eval`) and the Mininet demo (`demo`).

pub mod demo;
pub mod deploy;
pub mod eval;
pub mod failover;
