//! Query results as a table for people, or JSON / CSV for programs.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// Rows of named columns.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<Value>>,
}

impl Table {
    pub fn new(columns: Vec<&'static str>) -> Self {
        Self {
            columns,
            rows: Vec::new(),
        }
    }

    /// Adds a row from anything that serialises to an object with the
    /// table's column names.
    pub fn push_record(&mut self, rec: &impl serde::Serialize) {
        let v = serde_json::to_value(rec).unwrap_or(Value::Null);
        let row = self
            .columns
            .iter()
            .map(|c| v.get(c).cloned().unwrap_or(Value::Null))
            .collect();
        self.rows.push(row);
    }

    pub fn render(&self, f: Format) -> String {
        match f {
            Format::Json => {
                let objs: Vec<serde_json::Map<String, Value>> = self
                    .rows
                    .iter()
                    .map(|r| {
                        self.columns
                            .iter()
                            .map(|c| c.to_string())
                            .zip(r.iter().cloned())
                            .collect()
                    })
                    .collect();
                let mut s = serde_json::to_string_pretty(&objs).unwrap_or_default();
                s.push('\n');
                s
            }
            Format::Csv => csv_text(
                std::iter::once(self.columns.iter().map(|c| c.to_string()).collect())
                    .chain(self.rows.iter().map(|r| r.iter().map(plain).collect())),
            ),
            Format::Table => {
                let cells: Vec<Vec<String>> = self
                    .rows
                    .iter()
                    .map(|r| r.iter().map(rounded).collect())
                    .collect();
                let widths: Vec<usize> = self
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        cells
                            .iter()
                            .map(|r| r[i].chars().count())
                            .chain([c.len()])
                            .max()
                            .unwrap_or(0)
                    })
                    .collect();
                let line = |cells: Vec<String>| {
                    let parts: Vec<String> = cells
                        .iter()
                        .zip(&widths)
                        .map(|(c, w)| format!("{c:>w$}"))
                        .collect();
                    parts.join("  ").trim_end().to_string() + "\n"
                };
                let mut s = line(self.columns.iter().map(|c| c.to_string()).collect());
                for r in cells {
                    s += &line(r);
                }
                s
            }
        }
    }
}

/// Records as CSV text (RFC 4180 quoting), first record the header.
pub fn csv_text(records: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in records {
        // Writing to memory fails only on a bug in csv.
        w.write_record(&r).expect("in-memory CSV");
    }
    let bytes = w
        .into_inner()
        .map_err(|e| e.into_error())
        .expect("in-memory CSV");
    String::from_utf8(bytes).expect("CSV of UTF-8 cells")
}

fn plain(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Like [`plain`] but with at most three decimals, for people.
fn rounded(v: &Value) -> String {
    match v.as_f64() {
        Some(f) if v.is_f64() => {
            let s = format!("{f:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        _ => plain(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Table {
        let mut t = Table::new(vec!["link", "value"]);
        t.rows.push(vec![json!("s1:2->s2"), json!(12.5)]);
        t.rows.push(vec![json!("a,b"), json!(3)]);
        t
    }

    #[test]
    fn formats() {
        let t = sample();
        assert_eq!(
            t.render(Format::Table),
            "    link  value\ns1:2->s2   12.5\n     a,b      3\n"
        );
        assert_eq!(
            t.render(Format::Csv),
            "link,value\ns1:2->s2,12.5\n\"a,b\",3\n"
        );
        let v: Value = serde_json::from_str(&t.render(Format::Json)).unwrap();
        assert_eq!(v[0]["link"], "s1:2->s2");
        assert_eq!(v[1]["value"], 3);
    }
}
