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
use intpath_store::query::{LinkValue, QueryError, RunInfo};
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

/// The colour of `t` in `0..=1` (clamped) on ColorBrewer's YlOrRd, idle to
/// hot.
pub fn heat_color(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let c = colorous::YELLOW_ORANGE_RED.eval_continuous(t);
    RGBColor(c.r, c.g, c.b)
}

/// Values `0..=max` of one metric, with the legend text.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    pub max: f64,
    /// Metric and unit, e.g. "queue depth (packets)".
    pub label: String,
}

impl Scale {
    /// A scale that fits `values`, never collapsing to zero width.
    pub fn fit(values: impl IntoIterator<Item = f64>, label: String) -> Self {
        let max = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        Self {
            max: if max > 0.0 { max } else { 1.0 },
            label,
        }
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
        Self { names, cells }
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
    pub links: Vec<String>,
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
    }
}
