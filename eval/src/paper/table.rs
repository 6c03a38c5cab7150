//! A figure's data and its two renderings: CSV and a PNG line chart.

use super::EvalError;
use intpath_collector::table::csv_text;
use intpath_core::plot::FONT_FAMILY;
use plotters::prelude::*;
use std::path::Path;

/// One figure's data: an x column and named y columns.
pub struct Table {
    pub name: &'static str,
    pub title: String,
    pub x: &'static str,
    pub y: &'static str,
    pub columns: Vec<&'static str>,
    /// `(x, values in column order)`.
    pub rows: Vec<(f64, Vec<f64>)>,
}

impl Table {
    pub fn csv(&self) -> String {
        let header = std::iter::once(self.x)
            .chain(self.columns.iter().copied())
            .map(str::to_owned)
            .collect();
        let rows = self.rows.iter().map(|(x, ys)| {
            std::iter::once(x.to_string())
                .chain(ys.iter().map(|y| ((y * 1e4).round() / 1e4).to_string()))
                .collect()
        });
        csv_text(std::iter::once(header).chain(rows))
    }

    pub(super) fn draw(&self, path: &Path) -> Result<(), EvalError> {
        let fail = |e: &dyn std::fmt::Display| EvalError::Draw(path.to_owned(), e.to_string());
        let xs: Vec<f64> = self.rows.iter().map(|r| r.0).collect();
        let (x0, x1) = bounds(xs.iter().copied());
        let (_, y1) = bounds(self.rows.iter().flat_map(|r| r.1.iter().copied()));
        let root = BitMapBackend::new(path, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, (FONT_FAMILY, 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d(x0..x1, 0.0..y1 * 1.08)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_desc(self.x)
            .y_desc(self.y)
            .label_style((FONT_FAMILY, 14))
            .draw()
            .map_err(|e| fail(&e))?;
        const COLOURS: [RGBColor; 6] = [
            RGBColor(31, 119, 180),
            RGBColor(214, 39, 40),
            RGBColor(44, 160, 44),
            RGBColor(148, 103, 189),
            RGBColor(255, 127, 14),
            RGBColor(23, 190, 207),
        ];
        for (i, name) in self.columns.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let points: Vec<(f64, f64)> = self.rows.iter().map(|r| (r.0, r.1[i])).collect();
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
                .map_err(|e| fail(&e))?
                .label(*name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 3, colour.filled())),
                )
                .map_err(|e| fail(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT_FAMILY, 14))
            .draw()
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))
    }
}

fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if lo > hi {
        (0.0, 1.0)
    } else if lo == hi {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn csv_has_a_header_and_values_rounded_to_four_decimals() {
        let t = Table {
            name: "t",
            title: String::new(),
            x: "n",
            y: "y",
            columns: vec!["euler", "dfs"],
            rows: vec![(10.0, vec![1.0, 2.123456]), (20.5, vec![3.0, 4.0])],
        };
        assert_eq!(t.csv(), "n,euler,dfs\n10,1,2.1235\n20.5,3,4\n");
    }
}
