//! The link × time heatmap's layout and drawing.

use super::draw::{
    err, font, label_margin, label_plan, Cells, DrawResult, LEGEND_W, MARGIN, TITLE_H,
};
use super::ticks::{round_ticks, seconds};
use super::{Cell, Grid, Timeline};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

impl Cells for Timeline {
    fn empty(&self) -> Option<&'static str> {
        (self.links.is_empty() || self.times.is_empty())
            .then_some("no link has data in the time range")
    }

    fn layout(&self) -> (Grid, (u32, u32)) {
        timeline_layout(self)
    }

    fn values(&self) -> &[Vec<Cell>] {
        &self.cells
    }

    fn row_names(&self) -> &[String] {
        &self.shown
    }

    fn legend_no_data(&self) -> bool {
        false
    }

    fn draw_axes<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        grid: Grid,
    ) -> DrawResult<()> {
        // About eight time ticks, at round seconds.
        let bottom = grid.y0 + grid.height();
        let start = self.times.first().copied().unwrap_or(0.0);
        let end = start + self.times.len() as f64 * self.bucket_s;
        for secs in round_ticks(start, end, 8) {
            let x =
                grid.x0 + ((secs - start) / self.bucket_s * f64::from(grid.cell_w)).round() as i32;
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
                (self.bucket_s * 1e3).round()
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
        .map_err(err)
    }
}

fn timeline_layout(t: &Timeline) -> (Grid, (u32, u32)) {
    let rows = t.links.len().max(1) as i32;
    let cols = t.times.len().max(1) as i32;
    let cell_h = (1000 / rows).clamp(2, 24);
    let cell_w = (1200 / cols).clamp(1, 40);
    let (size, _) = label_plan(cell_h.max(10));
    let (left, _) = label_margin(&t.shown, size);
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
