//! Every picture intpath draws, on plotters and one registered font:
//! telemetry heatmaps read from the store (`heatmap`) and the evaluations'
//! line and bar charts (`chart`). No other crate uses plotters.

pub mod chart;
pub mod font;
pub mod heatmap;
