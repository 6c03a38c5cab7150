//! The evaluations' charts as PNG files: lines over a numeric x axis (the
//! planner's figures) and grouped bars (the diagnosis matrix). Callers hand
//! over numbers and names; every plotters detail, font and colour stays here.

use crate::font::{register_font, FontError, FONT_FAMILY};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error(transparent)]
    Font(#[from] FontError),
    #[error("{0}: cannot draw: {1}")]
    Draw(PathBuf, String),
}

/// Series colours, in order (matplotlib's first six "tab" colours: told apart
/// in print and by most colour-blind readers).
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One named line: `(x, y)` points in x order.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Lines on one pair of axes; y starts at 0.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub lines: Vec<Line>,
}

/// One bar per group for each series, side by side within the group.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub y_desc: String,
    /// The groups along x, labelled under their bars.
    pub groups: Vec<String>,
    pub series: Vec<Bars>,
    /// The highest y labelled; the axis runs 30 % above it so the legend
    /// never hides a full bar.
    pub y_max: f64,
}

/// A series of bars: `values[g]` is its bar in group `g` (`None`: no bar).
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// Draws `chart` as an 800 × 500 PNG at `path`, points marked on the lines.
pub fn lines(path: &Path, chart: &LineChart) -> Result<(), ChartError> {
    register_font()?;
    let fail = |e: &dyn std::fmt::Display| ChartError::Draw(path.to_owned(), e.to_string());
    let points = || chart.lines.iter().flat_map(|l| l.points.iter());
    let (x0, x1) = bounds(points().map(|p| p.0));
    let (_, y1) = bounds(points().map(|p| p.1));
    let root = BitMapBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut c = ChartBuilder::on(&root)
        .caption(&chart.title, (FONT_FAMILY, 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(x0..x1, 0.0..y1 * 1.08)
        .map_err(|e| fail(&e))?;
    c.configure_mesh()
        .x_desc(&chart.x_desc)
        .y_desc(&chart.y_desc)
        .label_style((FONT_FAMILY, 14))
        .draw()
        .map_err(|e| fail(&e))?;
    for (i, line) in chart.lines.iter().enumerate() {
        let colour = colour(i);
        c.draw_series(LineSeries::new(
            line.points.iter().copied(),
            colour.stroke_width(2),
        ))
        .map_err(|e| fail(&e))?
        .label(&line.name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        c.draw_series(
            line.points
                .iter()
                .map(|&p| Circle::new(p, 3, colour.filled())),
        )
        .map_err(|e| fail(&e))?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT_FAMILY, 14))
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}

/// Draws `chart` as an 800 × 450 PNG at `path`.
pub fn bars(path: &Path, chart: &BarChart) -> Result<(), ChartError> {
    register_font()?;
    let fail = |e: &dyn std::fmt::Display| ChartError::Draw(path.to_owned(), e.to_string());
    let groups = &chart.groups;
    let y_max = if chart.y_max > 0.0 { chart.y_max } else { 1.0 };
    let root = BitMapBackend::new(path, (800, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut c = ChartBuilder::on(&root)
        .caption(&chart.title, (FONT_FAMILY, 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..groups.len().max(1) as f64, 0.0..y_max * 1.3)
        .map_err(|e| fail(&e))?;
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        // A group's name under its middle, nothing at its edges.
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            match (x - x.floor() - 0.5).abs() < 0.01 {
                true => groups.get(i).cloned().unwrap_or_default(),
                false => String::new(),
            }
        })
        .y_label_formatter(&|y| match *y <= y_max * (1.0 + 1e-9) {
            true => format!("{y:.1}"),
            false => String::new(),
        })
        .y_desc(&chart.y_desc)
        .label_style((FONT_FAMILY, 14))
        .draw()
        .map_err(|e| fail(&e))?;
    // Bars fill the middle 70 % of a group, 0.02 apart.
    let slot = 0.69 / chart.series.len().max(1) as f64;
    for (k, series) in chart.series.iter().enumerate() {
        let colour = colour(k);
        let bars = series.values.iter().enumerate().filter_map(|(g, v)| {
            let x0 = g as f64 + 0.15 + slot * k as f64;
            let v = (*v)?;
            Some(Rectangle::new(
                [(x0, 0.0), (x0 + slot - 0.02, v)],
                colour.filled(),
            ))
        });
        c.draw_series(bars)
            .map_err(|e| fail(&e))?
            .label(&series.name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT_FAMILY, 14))
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}

/// The range of `v`, widened to a unit around a single value and to `0..1`
/// when empty, so an axis never has zero width.
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
    use super::*;

    /// Pixels of `img` in `colour`.
    fn count(img: &image::RgbImage, colour: RGBColor) -> usize {
        img.pixels()
            .filter(|p| p.0 == [colour.0, colour.1, colour.2])
            .count()
    }

    #[test]
    fn each_line_is_drawn_in_its_own_colour() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("lines.png");
        let line = |name: &str, ys: [f64; 3]| Line {
            name: name.into(),
            points: ys.iter().enumerate().map(|(i, y)| (i as f64, *y)).collect(),
        };
        let chart = LineChart {
            title: "paths per topology".into(),
            x_desc: "switches".into(),
            y_desc: "paths".into(),
            lines: vec![line("euler", [1.0, 2.0, 3.0]), line("dfs", [2.0, 2.0, 5.0])],
        };
        lines(&out, &chart).unwrap();
        let img = image::open(&out).unwrap().to_rgb8();
        assert_eq!((img.width(), img.height()), (800, 500));
        assert!(count(&img, colour(0)) > 100 && count(&img, colour(1)) > 100);
        assert_eq!(count(&img, colour(2)), 0, "a third colour for two lines");
    }

    #[test]
    fn bars_are_as_tall_as_their_values_and_missing_ones_are_not_drawn() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bars.png");
        let chart = BarChart {
            title: "top-1".into(),
            y_desc: "rate".into(),
            groups: vec!["link".into(), "service".into()],
            series: vec![
                Bars {
                    name: "ours".into(),
                    values: vec![Some(1.0), Some(0.5)],
                },
                Bars {
                    name: "baseline".into(),
                    values: vec![Some(0.25), None],
                },
            ],
            y_max: 1.0,
        };
        bars(&out, &chart).unwrap();
        let img = image::open(&out).unwrap().to_rgb8();
        // Bar areas in proportion to their values (legend swatches aside):
        // 1.5 units of the first series against 0.25 of the second.
        let (a, b) = (count(&img, colour(0)) as f64, count(&img, colour(1)) as f64);
        let ratio = a / b;
        assert!((4.5..7.5).contains(&ratio), "{a} / {b} = {ratio}");
        let err = bars(Path::new("/nonexistent-dir/x.png"), &chart).unwrap_err();
        assert!(err.to_string().contains("cannot draw"), "{err}");
    }
}
