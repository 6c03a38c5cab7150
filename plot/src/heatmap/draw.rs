//! Drawing on plotters backends: shared layout, cells, legend and the
//! switch × switch snapshots (single, PNG series or animated GIF).

use super::{heat_color, Cell, Grid, HeatmapError, Matrix, Outline, Scale, NO_DATA, NO_LINK};
use crate::font::{register_font, FONT_FAMILY};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

pub(super) const TITLE_H: i32 = 44;
pub(super) const LEGEND_W: i32 = 150;
pub(super) const MARGIN: i32 = 12;

pub(super) fn font(size: i32) -> TextStyle<'static> {
    TextStyle::from((FONT_FAMILY, size).into_font()).color(&BLACK)
}

pub(super) fn text_width(text: &str, size: i32) -> i32 {
    // A generous estimate for DejaVu Sans; only used to reserve margins.
    (text.chars().count() as f64 * f64::from(size) * 0.62).ceil() as i32
}

/// Label size and how many rows or columns share one label, so that labels
/// never overlap however many cells there are.
pub(super) fn label_plan(cell: i32) -> (i32, usize) {
    let size = (cell - 2).clamp(8, 14);
    let every = ((size + 2) as f64 / f64::from(cell)).ceil().max(1.0) as usize;
    (size, every)
}

pub(super) type DrawResult<T> = Result<T, String>;

pub(super) fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// Where the grid starts, right of row labels in `size` points, and the
/// widest label's width.
pub(super) fn label_margin(labels: &[String], size: i32) -> (i32, i32) {
    let longest = labels
        .iter()
        .map(|s| text_width(s, size))
        .max()
        .unwrap_or(0);
    (MARGIN + 26 + longest + 6, longest)
}

/// The geometry of a snapshot of `n` switches.
fn snapshot_layout(m: &Matrix) -> (Grid, (u32, u32)) {
    let n = m.names.len().max(1) as i32;
    let cell = (1200 / n).clamp(12, 48);
    let (size, _) = label_plan(cell);
    let (left, longest) = label_margin(&m.shown, size);
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

/// Background, title, the coloured cells, a frame around them and the
/// outlined blocks (black with a white inner line: visible on any colour).
pub(super) fn draw_body<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: Grid,
    title: &str,
    cells: &[Vec<Cell>],
    scale: &Scale,
    outline: &[Outline],
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
    .map_err(err)?;
    for o in outline {
        let (x0, y0) = (
            g.x0 + o.cols.0 as i32 * g.cell_w,
            g.y0 + o.rows.0 as i32 * g.cell_h,
        );
        let (x1, y1) = (
            g.x0 + o.cols.1 as i32 * g.cell_w,
            g.y0 + o.rows.1 as i32 * g.cell_h,
        );
        draw_outline(root, (x0, y0), (x1, y1))?;
    }
    Ok(())
}

/// An outline as [`draw_body`] draws it around the block `x0,y0`–`x1,y1`.
fn draw_outline<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
) -> DrawResult<()> {
    root.draw(&Rectangle::new(
        [(x0 - 2, y0 - 2), (x1 + 2, y1 + 2)],
        BLACK.stroke_width(3),
    ))
    .map_err(err)?;
    root.draw(&Rectangle::new([(x0, y0), (x1, y1)], WHITE.stroke_width(1)))
        .map_err(err)
}

/// A vertical colour bar right of the grid, with ticks and the unit, and
/// below it what grey, white and (when `outlined`) a framed cell mean.
pub(super) fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: Grid,
    scale: &Scale,
    with_no_data: bool,
    outlined: bool,
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
    for (v, text) in scale.ticks() {
        let y = top + height - 1 - (f64::from(height - 1) * v / scale.max).round() as i32;
        root.draw(&PathElement::new(
            [(x + bar_w, y), (x + bar_w + 4, y)],
            BLACK,
        ))
        .map_err(err)?;
        let label = font(12).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(text, (x + bar_w + 6, y), label))
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
    if outlined {
        draw_outline(root, (x + 2, y + 2), (x + bar_w - 2, y + 12))?;
        let label = font(12).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new("culprit", (x + bar_w + 6, y + 7), label))
            .map_err(err)?;
    }
    Ok(())
}

/// A heatmap's data (the switch × switch [`Matrix`], the link × time
/// [`Timeline`]): where its cells go, their values and names, and the axes
/// it draws around them.
pub trait Cells {
    /// Why there is nothing to draw, when there is nothing.
    fn empty(&self) -> Option<&'static str>;
    /// The cell grid and the picture's size in pixels.
    fn layout(&self) -> (Grid, (u32, u32));
    /// The values, row by row.
    fn values(&self) -> &[Vec<Cell>];
    /// The rows' names, written left of the grid.
    fn row_names(&self) -> &[String];
    /// Whether the legend explains grey cells (no data).
    fn legend_no_data(&self) -> bool;
    /// Everything around the grid but the title, row names and legend:
    /// column labels, ticks, axis titles.
    fn draw_axes<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        grid: Grid,
    ) -> DrawResult<()>;
}

/// Draws `cells` on `root`: title, cells, outlines, row names, axes, legend.
fn draw_on<DB: DrawingBackend>(
    cells: &impl Cells,
    root: &DrawingArea<DB, Shift>,
    grid: Grid,
    scale: &Scale,
    title: &str,
    outline: &[Outline],
) -> DrawResult<()> {
    draw_body(root, grid, title, cells.values(), scale, outline)?;
    let (size, every) = label_plan(grid.cell_h);
    for (i, name) in cells.row_names().iter().enumerate().step_by(every) {
        let (_, cy) = grid.cell_center(i, 0);
        let label = font(size).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(name.as_str(), (grid.x0 - 4, cy), label))
            .map_err(err)?;
    }
    cells.draw_axes(root, grid)?;
    draw_legend(
        root,
        grid,
        scale,
        cells.legend_no_data(),
        !outline.is_empty(),
    )
}

impl Cells for Matrix {
    fn empty(&self) -> Option<&'static str> {
        self.names.is_empty().then_some("the run has no switches")
    }

    fn layout(&self) -> (Grid, (u32, u32)) {
        snapshot_layout(self)
    }

    fn values(&self) -> &[Vec<Cell>] {
        &self.cells
    }

    fn row_names(&self) -> &[String] {
        &self.shown
    }

    fn legend_no_data(&self) -> bool {
        true
    }

    fn draw_axes<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        grid: Grid,
    ) -> DrawResult<()> {
        // Columns are labelled like the rows.
        let (size, every) = label_plan(grid.cell_h);
        for (i, name) in self.shown.iter().enumerate().step_by(every) {
            let (cx, _) = grid.cell_center(i, i);
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
        .map_err(err)
    }
}

/// Draws `cells` on a PNG or SVG file, chosen by `out`'s extension, with
/// blocks of cells outlined; returns where the cells went.
pub fn draw(
    cells: &impl Cells,
    scale: &Scale,
    title: &str,
    out: &Path,
    outline: &[Outline],
) -> Result<Grid, HeatmapError> {
    if let Some(why) = cells.empty() {
        return Err(HeatmapError::Empty(why));
    }
    let (grid, size) = cells.layout();
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
        draw_on(cells, &root, grid, scale, title, outline).map_err(draw_err)?;
        root.present().map_err(|e| draw_err(err(e)))?;
    } else {
        let root = BitMapBackend::new(out, size).into_drawing_area();
        draw_on(cells, &root, grid, scale, title, outline).map_err(draw_err)?;
        root.present().map_err(|e| draw_err(err(e)))?;
    }
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
    if let Some(why) = first.empty() {
        return Err(HeatmapError::Empty(why));
    }
    let (grid, size) = first.layout();
    let is_gif = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gif"));
    if !is_gif {
        std::fs::create_dir_all(out).map_err(|e| HeatmapError::Io(out.to_owned(), e))?;
        let mut files = Vec::new();
        for (i, (title, m)) in frames.iter().enumerate() {
            let f = out.join(format!("frame-{i:04}.png"));
            draw(m, scale, title, &f, &[])?;
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
        draw_on(m, &root, grid, scale, title, &[]).map_err(draw_err)?;
        root.present().map_err(|e| draw_err(err(e)))?;
    }
    Ok(vec![out.to_owned()])
}
