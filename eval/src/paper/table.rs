//! A figure's data and its two renderings: CSV and a PNG line chart.

use super::EvalError;
use intpath_plot::chart::{self, Line, LineChart};
use intpath_store::table::csv_text;
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
        let lines = self.columns.iter().enumerate().map(|(i, name)| Line {
            name: (*name).to_owned(),
            points: self.rows.iter().map(|r| (r.0, r.1[i])).collect(),
        });
        let chart = LineChart {
            title: self.title.clone(),
            x_desc: self.x.to_owned(),
            y_desc: self.y.to_owned(),
            lines: lines.collect(),
        };
        Ok(chart::lines(path, &chart)?)
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
