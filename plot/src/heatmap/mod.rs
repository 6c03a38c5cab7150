//! The pictures: a switch × switch snapshot (the paper's "bitmap image" of the
//! whole network), a link × time heatmap over a run, and frame series.
//!
//! Everything is drawn cell by cell on a plain drawing area rather than a
//! chart so that cell geometry is exact ([`Grid`] says where each cell is,
//! which the tests use to read colours back). Colours run from pale yellow
//! (idle) to dark red (hot) with a fixed legend; a frame series shares one
//! scale so its frames can be compared.

mod draw;
mod render;
mod ticks;
mod timeline;

pub use draw::{draw, draw_frames, Cells};
pub use render::{
    culprit_heatmaps, render, render_outlined, timeline, HeatmapKind, HeatmapRequest, MAX_FRAMES,
    MAX_TIMELINE_COLUMNS,
};
pub use ticks::{round_ticks, seconds};

use crate::font::FontError;
use intpath_store::query::{LinkValue, Metric, QueryError, RunInfo, Stat};
use plotters::style::RGBColor;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HeatmapError {
    #[error(transparent)]
    Font(#[from] FontError),
    #[error("{0}: cannot draw: {1}")]
    Draw(PathBuf, String),
    #[error("{0}: cannot create: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("nothing to draw: {0}")]
    Empty(&'static str),
    #[error(transparent)]
    Query(#[from] QueryError),
}

/// A pair of nodes with no link between them.
pub const NO_LINK: RGBColor = RGBColor(255, 255, 255);
/// A link no probe measured in the window.
pub const NO_DATA: RGBColor = RGBColor(200, 200, 200);

/// Where on YlOrRd an idle link starts: its palest end is all but the white
/// of "no link", so zero is drawn a clear yellow instead.
const IDLE_START: f64 = 0.15;

/// The colour of `t` in `0..=1` (clamped) on ColorBrewer's YlOrRd, idle to
/// hot, zero a clear yellow.
pub fn heat_color(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let c = colorous::YELLOW_ORANGE_RED.eval_continuous(IDLE_START + (1.0 - IDLE_START) * t);
    RGBColor(c.r, c.g, c.b)
}

/// Values `0..=max` of one metric, with the legend text and the unit its
/// ticks are written in.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    /// The largest value, in the unit the store holds.
    pub max: f64,
    /// Metric and the unit ticks are written in, e.g. "mean queueing delay (ms)".
    pub label: String,
    /// Stored units per written unit: 1000 for delays stored in µs and
    /// written in ms.
    pub per_unit: f64,
}

/// Loss (%) below which a loss heatmap's scale does not shrink.
const LOSS_FULL_SCALE_MIN: f64 = 1.0;

/// Ticks the legend writes, about this many.
const TICKS: usize = 5;

impl Scale {
    /// A scale that fits `values`, never collapsing to zero width, written
    /// in the unit the values are in.
    pub fn fit(values: impl IntoIterator<Item = f64>, label: String) -> Self {
        let max = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        Self {
            max: if max > 0.0 { max } else { 1.0 },
            label,
            per_unit: 1.0,
        }
    }

    /// The scale of `metric` summarised by `stat` over `values`: delays
    /// (stored in µs) written in ms once the largest reaches a millisecond.
    pub fn for_metric(values: impl IntoIterator<Item = f64>, metric: Metric, stat: Stat) -> Self {
        let mut s = Self::fit(values, String::new());
        if metric == Metric::Loss {
            // A hundredth of a percent is not drawn as dark as a real loss.
            s.max = s.max.max(LOSS_FULL_SCALE_MIN);
        }
        let unit = match metric {
            Metric::Qdelay if s.max >= 1e3 => {
                s.per_unit = 1e3;
                "ms"
            }
            _ => metric.unit(),
        };
        s.label = match metric {
            Metric::Loss => format!("{} ({unit})", metric.title()),
            _ => format!(
                "{} {} ({unit})",
                format!("{stat:?}").to_lowercase(),
                metric.title()
            ),
        };
        s
    }

    /// The legend's ticks: round values of the written unit from 0 up to
    /// the largest value, each as (stored value, text).
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let top = self.max / self.per_unit;
        let ticks = round_ticks(0.0, top, TICKS);
        let step = match ticks.as_slice() {
            [a, b, ..] => b - a,
            _ => top,
        };
        let decimals = (-step.log10().floor()).max(0.0) as usize;
        ticks
            .into_iter()
            .map(|v| (v * self.per_unit, format!("{:.*}", decimals, v + 0.0)))
            .collect()
    }

    fn color(&self, v: f64) -> RGBColor {
        heat_color(v / self.max)
    }
}

/// What a cell shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell {
    NoLink,
    NoData,
    Value(f64),
}

/// Switch × switch: `cells[row][col]` is the link from switch `row` to `col`.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub names: Vec<String>,
    /// The names as drawn: with the topology's labels when it has them.
    pub shown: Vec<String>,
    pub cells: Vec<Vec<Cell>>,
}

impl Matrix {
    /// Places link values of a run; links to or from hosts are left out.
    pub fn from_links(run: &RunInfo, values: &[LinkValue]) -> Self {
        let names: Vec<String> = run.switches.iter().map(|(n, _)| n.clone()).collect();
        let pos = |n: &str| names.iter().position(|x| x == n);
        let mut cells = vec![vec![Cell::NoLink; names.len()]; names.len()];
        let mut link_cell = vec![None; run.links.len()];
        for (i, l) in run.links.iter().enumerate() {
            if let (Some(r), Some(c)) = (pos(&l.src), pos(&l.dst)) {
                cells[r][c] = Cell::NoData;
                link_cell[i] = Some((r, c));
            }
        }
        for v in values {
            if let Some(Some((r, c))) = link_cell.get(v.link as usize) {
                // Parallel links between one pair: show the hotter.
                let cur = match cells[*r][*c] {
                    Cell::Value(x) => x.max(v.value),
                    _ => v.value,
                };
                cells[*r][*c] = Cell::Value(cur);
            }
        }
        let shown = names.iter().map(|n| run.switch_name(n)).collect();
        Self {
            names,
            shown,
            cells,
        }
    }
}

impl Matrix {
    /// The cell of the link from `src` to `dst`, when both are switches here.
    pub fn cell_of(&self, src: &str, dst: &str) -> Option<(usize, usize)> {
        let pos = |n: &str| self.names.iter().position(|x| x == n);
        Some((pos(src)?, pos(dst)?))
    }
}

/// A block of cells to outline (rows and columns half-open, in cells): how
/// a picture points at the links a diagnosis blames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outline {
    pub rows: (usize, usize),
    pub cols: (usize, usize),
}

impl Outline {
    pub fn cell(row: usize, col: usize) -> Self {
        Outline {
            rows: (row, row + 1),
            cols: (col, col + 1),
        }
    }
}

/// Rows of links over columns of time buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The rows' links, named as every output names them.
    pub links: Vec<String>,
    /// The rows as drawn: with the ends' topology labels when they have them.
    pub shown: Vec<String>,
    /// Start of each column, seconds after the first probe.
    pub times: Vec<f64>,
    /// Width of a column: one bucket, or several over a long range.
    pub bucket_s: f64,
    pub cells: Vec<Vec<Cell>>,
}

/// Where the cells of a drawn heatmap are, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub x0: i32,
    pub y0: i32,
    pub cell_w: i32,
    pub cell_h: i32,
    pub rows: usize,
    pub cols: usize,
}

impl Grid {
    pub fn cell_center(&self, row: usize, col: usize) -> (i32, i32) {
        (
            self.x0 + col as i32 * self.cell_w + self.cell_w / 2,
            self.y0 + row as i32 * self.cell_h + self.cell_h / 2,
        )
    }
    fn width(&self) -> i32 {
        self.cols as i32 * self.cell_w
    }
    fn height(&self) -> i32 {
        self.rows as i32 * self.cell_h
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_darken_with_heat() {
        let lum =
            |c: RGBColor| 0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2);
        let mut last = f64::MAX;
        for i in 0..=100 {
            let l = lum(heat_color(f64::from(i) / 100.0));
            assert!(l < last, "not darker at {i}");
            last = l;
        }
        assert_eq!(heat_color(-1.0), heat_color(0.0));
        assert_eq!(heat_color(f64::NAN), heat_color(0.0));
        assert_eq!(heat_color(7.0), RGBColor(128, 0, 38));
        // Zero is told apart from "no link" and "no data" at a glance.
        let far = |a: RGBColor, b: RGBColor| {
            (i32::from(a.0) - i32::from(b.0)).abs()
                + (i32::from(a.1) - i32::from(b.1)).abs()
                + (i32::from(a.2) - i32::from(b.2)).abs()
        };
        assert!(
            far(heat_color(0.0), NO_LINK) >= 100,
            "{:?}",
            heat_color(0.0)
        );
        assert!(
            far(heat_color(0.0), NO_DATA) >= 100,
            "{:?}",
            heat_color(0.0)
        );
    }

    fn texts(s: &Scale) -> Vec<String> {
        s.ticks().into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn legend_ticks_are_round_in_a_unit_that_suits_the_values() {
        // 63 packets: 0, 20, 40, 60, never 15.8 or 47.2.
        let depth = Scale::for_metric([63.0, 2.0], Metric::Qdepth, Stat::Mean);
        assert_eq!(texts(&depth), ["0", "20", "40", "60"]);
        assert_eq!(depth.label, "mean queue depth (packets)");
        // 89,659 µs is written in ms, at 0, 20, … 80 ms.
        let delay = Scale::for_metric([89_659.0], Metric::Qdelay, Stat::Max);
        assert_eq!(texts(&delay), ["0", "20", "40", "60", "80"]);
        assert_eq!(delay.ticks()[1].0, 20_000.0);
        assert_eq!(delay.label, "max queueing delay (ms)");
        // Short delays stay in µs; small ranges get decimals, not 0.33.
        let short = Scale::for_metric([540.0], Metric::Qdelay, Stat::Mean);
        assert_eq!(texts(&short), ["0", "200", "400"]);
        assert_eq!(short.label, "mean queueing delay (µs)");
        let loss = Scale::for_metric([0.08], Metric::Loss, Stat::Mean);
        assert_eq!(texts(&loss), ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        assert!(loss.color(0.08) != heat_color(1.0));
        let small = Scale::fit([0.5], "q".into());
        assert_eq!(texts(&small), ["0.0", "0.1", "0.2", "0.3", "0.4", "0.5"]);
        assert_eq!(loss.label, "loss (%)");
        // Nothing above zero: one unit wide, never a zero-width scale.
        assert_eq!(
            texts(&Scale::for_metric([0.0], Metric::Loss, Stat::Mean))
                .last()
                .unwrap(),
            "1.0"
        );
    }
}
