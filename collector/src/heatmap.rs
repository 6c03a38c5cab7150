//! The pictures: a switch × switch snapshot (the paper's "bitmap image" of the
//! whole network), a link × time heatmap over a run, and frame series.
//!
//! Everything is drawn cell by cell on a plain drawing area rather than a
//! chart so that cell geometry is exact ([`Grid`] says where each cell is,
//! which the tests use to read colours back). Colours run from pale yellow
//! (idle) to dark red (hot) with a fixed legend; a frame series shares one
//! scale so its frames can be compared.

use crate::query::{LinkValue, RunInfo};
use intpath_core::plot::{register_font, FontError, FONT_FAMILY};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

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
}

/// ColorBrewer's YlOrRd, idle to hot.
const HEAT: [(u8, u8, u8); 9] = [
    (255, 255, 204),
    (255, 237, 160),
    (254, 217, 118),
    (254, 178, 76),
    (253, 141, 60),
    (252, 78, 42),
    (227, 26, 28),
    (189, 0, 38),
    (128, 0, 38),
];
/// A pair of nodes with no link between them.
pub const NO_LINK: RGBColor = RGBColor(255, 255, 255);
/// A link no probe measured in the window.
pub const NO_DATA: RGBColor = RGBColor(200, 200, 200);

/// The colour of `t` in `0..=1` (clamped).
pub fn heat_color(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (HEAT.len() - 1) as f64;
    let i = (x.floor() as usize).min(HEAT.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (HEAT[i], HEAT[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
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

/// Rows of links over columns of time buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    pub links: Vec<String>,
    /// Start of each column, seconds after the first probe.
    pub times: Vec<f64>,
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

const TITLE_H: i32 = 44;
const LEGEND_W: i32 = 150;
const MARGIN: i32 = 12;

fn font(size: i32) -> TextStyle<'static> {
    TextStyle::from((FONT_FAMILY, size).into_font()).color(&BLACK)
}

fn text_width(text: &str, size: i32) -> i32 {
    // A generous estimate for DejaVu Sans; only used to reserve margins.
    (text.chars().count() as f64 * f64::from(size) * 0.62).ceil() as i32
}

/// Label size and how many rows or columns share one label, so that labels
/// never overlap however many cells there are.
fn label_plan(cell: i32) -> (i32, usize) {
    let size = (cell - 2).clamp(8, 14);
    let every = ((size + 2) as f64 / f64::from(cell)).ceil().max(1.0) as usize;
    (size, every)
}

type DrawResult<T> = Result<T, String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// The geometry of a snapshot of `n` switches.
fn snapshot_layout(m: &Matrix) -> (Grid, (u32, u32)) {
    let n = m.names.len().max(1) as i32;
    let cell = (1200 / n).clamp(12, 48);
    let (size, _) = label_plan(cell);
    let longest = m
        .names
        .iter()
        .map(|s| text_width(s, size))
        .max()
        .unwrap_or(0);
    let left = MARGIN + 26 + longest + 6;
    let grid = Grid {
        x0: left,
        y0: TITLE_H,
        cell_w: cell,
        cell_h: cell,
        rows: m.names.len(),
        cols: m.names.len(),
    };
    let w = left + grid.width() + LEGEND_W + MARGIN;
    let h = TITLE_H + grid.height() + 6 + longest + 30 + MARGIN;
    (grid, (w as u32, h as u32))
}

fn draw_snapshot_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    grid: Grid,
    m: &Matrix,
    scale: &Scale,
    title: &str,
) -> DrawResult<()> {
    draw_body(root, grid, title, &m.cells, scale)?;
    let (size, every) = label_plan(grid.cell_h);
    for (i, name) in m.names.iter().enumerate().step_by(every) {
        let (cx, cy) = grid.cell_center(i, i);
        let row_label = font(size).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(name.as_str(), (grid.x0 - 4, cy), row_label))
            .map_err(err)?;
        let col_label = font(size)
            .pos(Pos::new(HPos::Left, VPos::Center))
            .transform(FontTransform::Rotate90);
        root.draw(&Text::new(
            name.as_str(),
            (cx, grid.y0 + grid.height() + 4),
            col_label,
        ))
        .map_err(err)?;
    }
    let axis = font(14).pos(Pos::new(HPos::Center, VPos::Center));
    root.draw(&Text::new(
        "from (sending switch)",
        (MARGIN + 8, grid.y0 + grid.height() / 2),
        axis.clone().transform(FontTransform::Rotate270),
    ))
    .map_err(err)?;
    let (_, h) = root.dim_in_pixel();
    root.draw(&Text::new(
        "to (receiving switch)",
        (grid.x0 + grid.width() / 2, h as i32 - MARGIN - 8),
        axis,
    ))
    .map_err(err)?;
    draw_legend(root, grid, scale, true)
}

/// Background, title, the coloured cells and a frame around them.
fn draw_body<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: Grid,
    title: &str,
    cells: &[Vec<Cell>],
    scale: &Scale,
) -> DrawResult<()> {
    root.fill(&WHITE).map_err(err)?;
    root.draw(&Text::new(title, (g.x0, 12), font(18)))
        .map_err(err)?;
    for (r, row) in cells.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let color = match cell {
                Cell::NoLink => NO_LINK,
                Cell::NoData => NO_DATA,
                Cell::Value(v) => scale.color(*v),
            };
            let x = g.x0 + c as i32 * g.cell_w;
            let y = g.y0 + r as i32 * g.cell_h;
            root.draw(&Rectangle::new(
                [(x, y), (x + g.cell_w, y + g.cell_h)],
                color.filled(),
            ))
            .map_err(err)?;
        }
    }
    root.draw(&Rectangle::new(
        [(g.x0, g.y0), (g.x0 + g.width(), g.y0 + g.height())],
        BLACK.stroke_width(1),
    ))
    .map_err(err)
}

/// A vertical colour bar right of the grid, with ticks and the unit.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: Grid,
    scale: &Scale,
    with_no_data: bool,
) -> DrawResult<()> {
    let x = g.x0 + g.width() + 24;
    let (top, height) = (g.y0, g.height().clamp(120, 600));
    let bar_w = 18;
    for dy in 0..height {
        let t = 1.0 - f64::from(dy) / f64::from(height - 1);
        root.draw(&Rectangle::new(
            [(x, top + dy), (x + bar_w, top + dy + 1)],
            heat_color(t).filled(),
        ))
        .map_err(err)?;
    }
    root.draw(&Rectangle::new(
        [(x, top), (x + bar_w, top + height)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    for k in 0..=4 {
        let v = scale.max * f64::from(k) / 4.0;
        let y = top + height - 1 - (f64::from(height - 1) * f64::from(k) / 4.0) as i32;
        root.draw(&PathElement::new(
            [(x + bar_w, y), (x + bar_w + 4, y)],
            BLACK,
        ))
        .map_err(err)?;
        let label = font(12).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(tick(v), (x + bar_w + 6, y), label))
            .map_err(err)?;
    }
    let unit = font(13)
        .pos(Pos::new(HPos::Center, VPos::Center))
        .transform(FontTransform::Rotate90);
    root.draw(&Text::new(
        scale.label.as_str(),
        (x + bar_w + 70, top + height / 2),
        unit,
    ))
    .map_err(err)?;
    let mut y = top + height + 14;
    let swatches: &[(RGBColor, &str)] = if with_no_data {
        &[(NO_DATA, "no data"), (NO_LINK, "no link")]
    } else {
        &[(NO_DATA, "no data")]
    };
    for (color, text) in swatches {
        root.draw(&Rectangle::new(
            [(x, y), (x + bar_w, y + 12)],
            color.filled(),
        ))
        .map_err(err)?;
        root.draw(&Rectangle::new(
            [(x, y), (x + bar_w, y + 12)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
        let label = font(12).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(*text, (x + bar_w + 6, y + 6), label))
            .map_err(err)?;
        y += 18;
    }
    Ok(())
}

/// Ticks at multiples of 1, 2 or 5 × 10^k within `[from, to]`, about `n`.
pub fn round_ticks(from: f64, to: f64, n: usize) -> Vec<f64> {
    let span = to - from;
    if !(span.is_finite() && span > 0.0) {
        return vec![];
    }
    let raw = span / n.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (from / step).ceil() as i64;
    let last = (to / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// Seconds for labels and titles: one decimal, never `-0.0`.
pub fn seconds(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0 + 0.0;
    if r == r.trunc() {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

fn tick(v: f64) -> String {
    if v >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Something drawable on any plotters backend.
trait Picture {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<()>;
}

struct Snapshot<'a> {
    grid: Grid,
    m: &'a Matrix,
    scale: &'a Scale,
    title: &'a str,
}

impl Picture for Snapshot<'_> {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<()> {
        draw_snapshot_on(root, self.grid, self.m, self.scale, self.title)
    }
}

struct TimelinePicture<'a> {
    grid: Grid,
    t: &'a Timeline,
    scale: &'a Scale,
    title: &'a str,
}

impl Picture for TimelinePicture<'_> {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<()> {
        draw_timeline_on(root, self.grid, self.t, self.scale, self.title)
    }
}

/// Draws on a PNG or SVG file, chosen by `out`'s extension.
fn render(out: &Path, size: (u32, u32), pic: &impl Picture) -> Result<(), HeatmapError> {
    register_font()?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| HeatmapError::Io(dir.to_owned(), e))?;
    }
    let draw_err = |e: String| HeatmapError::Draw(out.to_owned(), e);
    let is_svg = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if is_svg {
        let root = SVGBackend::new(out, size).into_drawing_area();
        pic.draw_on(&root).map_err(draw_err)?;
        root.present().map_err(|e| draw_err(err(e)))
    } else {
        let root = BitMapBackend::new(out, size).into_drawing_area();
        pic.draw_on(&root).map_err(draw_err)?;
        root.present().map_err(|e| draw_err(err(e)))
    }
}

/// The switch × switch snapshot, as PNG or SVG (by extension).
pub fn draw_snapshot(
    m: &Matrix,
    scale: &Scale,
    title: &str,
    out: &Path,
) -> Result<Grid, HeatmapError> {
    if m.names.is_empty() {
        return Err(HeatmapError::Empty("the run has no switches"));
    }
    let (grid, size) = snapshot_layout(m);
    render(
        out,
        size,
        &Snapshot {
            grid,
            m,
            scale,
            title,
        },
    )?;
    Ok(grid)
}

/// A series of snapshots on one scale: an animated GIF when `out` ends in
/// `.gif` (`delay_ms` per frame), else numbered PNGs in directory `out`.
pub fn draw_frames(
    frames: &[(String, Matrix)],
    scale: &Scale,
    out: &Path,
    delay_ms: u32,
) -> Result<Vec<PathBuf>, HeatmapError> {
    let Some((_, first)) = frames.first() else {
        return Err(HeatmapError::Empty("no frames in the time range"));
    };
    if first.names.is_empty() {
        return Err(HeatmapError::Empty("the run has no switches"));
    }
    let (grid, size) = snapshot_layout(first);
    let is_gif = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gif"));
    if !is_gif {
        std::fs::create_dir_all(out).map_err(|e| HeatmapError::Io(out.to_owned(), e))?;
        let mut files = Vec::new();
        for (i, (title, m)) in frames.iter().enumerate() {
            let f = out.join(format!("frame-{i:04}.png"));
            draw_snapshot(m, scale, title, &f)?;
            files.push(f);
        }
        return Ok(files);
    }
    register_font()?;
    let draw_err = |e: String| HeatmapError::Draw(out.to_owned(), e);
    let root = BitMapBackend::gif(out, size, delay_ms)
        .map_err(|e| draw_err(err(e)))?
        .into_drawing_area();
    for (title, m) in frames {
        draw_snapshot_on(&root, grid, m, scale, title).map_err(draw_err)?;
        root.present().map_err(|e| draw_err(err(e)))?;
    }
    Ok(vec![out.to_owned()])
}

fn timeline_layout(t: &Timeline) -> (Grid, (u32, u32)) {
    let rows = t.links.len().max(1) as i32;
    let cols = t.times.len().max(1) as i32;
    let cell_h = (1000 / rows).clamp(2, 24);
    let cell_w = (1200 / cols).clamp(1, 40);
    let (size, _) = label_plan(cell_h.max(10));
    let longest = t
        .links
        .iter()
        .map(|s| text_width(s, size))
        .max()
        .unwrap_or(0);
    let left = MARGIN + 26 + longest + 6;
    let grid = Grid {
        x0: left,
        y0: TITLE_H,
        cell_w,
        cell_h,
        rows: t.links.len(),
        cols: t.times.len(),
    };
    let w = left + grid.width().max(300) + LEGEND_W + MARGIN;
    let h = TITLE_H + grid.height().max(160) + 60 + MARGIN;
    (grid, (w as u32, h as u32))
}

fn draw_timeline_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    grid: Grid,
    t: &Timeline,
    scale: &Scale,
    title: &str,
) -> DrawResult<()> {
    draw_body(root, grid, title, &t.cells, scale)?;
    let (size, every) = label_plan(grid.cell_h);
    for (i, name) in t.links.iter().enumerate().step_by(every) {
        let (_, cy) = grid.cell_center(i, 0);
        let label = font(size).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(name.as_str(), (grid.x0 - 4, cy), label))
            .map_err(err)?;
    }
    // About eight time ticks, at round seconds.
    let bottom = grid.y0 + grid.height();
    let start = t.times.first().copied().unwrap_or(0.0);
    let end = start + t.times.len() as f64 * t.bucket_s;
    for secs in round_ticks(start, end, 8) {
        let x = grid.x0 + ((secs - start) / t.bucket_s * f64::from(grid.cell_w)).round() as i32;
        root.draw(&PathElement::new([(x, bottom), (x, bottom + 4)], BLACK))
            .map_err(err)?;
        let label = font(12).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(seconds(secs), (x, bottom + 6), label))
            .map_err(err)?;
    }
    let axis = font(14).pos(Pos::new(HPos::Center, VPos::Center));
    root.draw(&Text::new(
        format!(
            "time after the first probe (s), {} ms per column",
            (t.bucket_s * 1e3).round()
        ),
        (grid.x0 + grid.width() / 2, bottom + 36),
        axis.clone(),
    ))
    .map_err(err)?;
    root.draw(&Text::new(
        "link (sender:port->receiver)",
        (MARGIN + 8, grid.y0 + grid.height() / 2),
        axis.transform(FontTransform::Rotate270),
    ))
    .map_err(err)?;
    draw_legend(root, grid, scale, false)
}

/// The link × time heatmap, as PNG or SVG (by extension).
pub fn draw_timeline(
    t: &Timeline,
    scale: &Scale,
    title: &str,
    out: &Path,
) -> Result<Grid, HeatmapError> {
    if t.links.is_empty() || t.times.is_empty() {
        return Err(HeatmapError::Empty("no link has data in the time range"));
    }
    let (grid, size) = timeline_layout(t);
    render(
        out,
        size,
        &TimelinePicture {
            grid,
            t,
            scale,
            title,
        },
    )?;
    Ok(grid)
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

#[cfg(test)]
mod tick_tests {
    use super::{round_ticks, seconds};

    #[test]
    fn time_ticks_are_round_and_never_negative_zero() {
        assert_eq!(
            round_ticks(-0.1, 10.1, 8),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        let small: Vec<String> = round_ticks(0.0, 0.5, 8).into_iter().map(seconds).collect();
        assert_eq!(small, ["0", "0.1", "0.2", "0.3", "0.4", "0.5"]);
        assert!(round_ticks(3.0, 3.0, 8).is_empty());
        assert_eq!(seconds(-0.04), "0");
        assert_eq!(seconds(-0.0), "0");
        assert_eq!(seconds(2.54), "2.5");
        assert_eq!(seconds(10.0), "10");
    }
}
