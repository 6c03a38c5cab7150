//! The link × time heatmap's layout and drawing.

use super::draw::{
    draw_body, draw_legend, err, font, label_margin, label_plan, render, DrawResult, Picture,
    LEGEND_W, MARGIN, TITLE_H,
};
use super::ticks::{round_ticks, seconds};
use super::{Grid, HeatmapError, Outline, Scale, Timeline};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

struct TimelinePicture<'a> {
    grid: Grid,
    t: &'a Timeline,
    scale: &'a Scale,
    title: &'a str,
    outline: &'a [Outline],
}

impl Picture for TimelinePicture<'_> {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<()> {
        draw_timeline_on(
            root,
            self.grid,
            self.t,
            self.scale,
            self.title,
            self.outline,
        )
    }
}

fn timeline_layout(t: &Timeline) -> (Grid, (u32, u32)) {
    let rows = t.links.len().max(1) as i32;
    let cols = t.times.len().max(1) as i32;
    let cell_h = (1000 / rows).clamp(2, 24);
    let cell_w = (1200 / cols).clamp(1, 40);
    let (size, _) = label_plan(cell_h.max(10));
    let (left, _) = label_margin(&t.links, size);
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
    outline: &[Outline],
) -> DrawResult<()> {
    draw_body(root, grid, title, &t.cells, scale, outline)?;
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
    draw_timeline_outlined(t, scale, title, out, &[])
}

/// [`draw_timeline`] with blocks of cells outlined.
pub fn draw_timeline_outlined(
    t: &Timeline,
    scale: &Scale,
    title: &str,
    out: &Path,
    outline: &[Outline],
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
            outline,
        },
    )?;
    Ok(grid)
}
