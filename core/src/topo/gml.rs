//! GML (`graph [ node [ id 0 label "A" ] edge [ source 0 target 1 ] ]`), the
//! other format of the Internet Topology Zoo. Read the same way as GraphML.

use super::graphml::build_zoo;
use super::{TopoError, Topology};

/// A GML value: numbers are kept as their text, lists as key/value pairs.
enum Value {
    Atom(String),
    List(Vec<(String, Value)>),
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn line(&self) -> usize {
        self.text[..self.pos].matches('\n').count() + 1
    }

    fn skip_space(&mut self) {
        loop {
            let rest = &self.text[self.pos..];
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with('#') {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                return;
            }
        }
    }

    /// The next token: `[`, `]`, a quoted string (returned with its quotes
    /// stripped and `quoted` set) or a bare word; `None` at the end.
    fn next(&mut self) -> Result<Option<(String, bool)>, String> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let Some(c) = rest.chars().next() else {
            return Ok(None);
        };
        if c == '[' || c == ']' {
            self.pos += 1;
            return Ok(Some((c.to_string(), false)));
        }
        if c == '"' {
            let end = rest[1..]
                .find('"')
                .ok_or_else(|| format!("line {}: unterminated string", self.line()))?;
            self.pos += end + 2;
            return Ok(Some((rest[1..end + 1].to_owned(), true)));
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '[' || c == ']')
            .unwrap_or(rest.len());
        self.pos += end;
        Ok(Some((rest[..end].to_owned(), false)))
    }

    /// Key/value pairs up to the closing `]` (or the end, at top level).
    fn list(&mut self, top: bool) -> Result<Vec<(String, Value)>, String> {
        let mut out = Vec::new();
        loop {
            let line = self.line();
            let key = match self.next()? {
                None if top => return Ok(out),
                None => return Err(format!("line {line}: missing ]")),
                Some((k, false)) if k == "]" && !top => return Ok(out),
                Some((k, false)) if k != "[" && k != "]" => k,
                Some((k, _)) => return Err(format!("line {line}: expected a key, found {k:?}")),
            };
            let value = match self.next()? {
                Some((v, false)) if v == "[" => Value::List(self.list(false)?),
                Some((v, quoted)) if quoted || v != "]" => Value::Atom(v),
                _ => return Err(format!("line {line}: key {key:?} has no value")),
            };
            out.push((key, value));
        }
    }
}

pub(super) fn parse(text: &str, origin: &str) -> Result<Topology, TopoError> {
    let err = |m: String| TopoError::invalid(origin, m);
    let mut lx = Lexer { text, pos: 0 };
    let top = lx
        .list(true)
        .map_err(|m| err(format!("not valid GML: {m}")))?;
    let graph = top
        .iter()
        .find_map(|(k, v)| match (k.as_str(), v) {
            ("graph", Value::List(g)) => Some(g),
            _ => None,
        })
        .ok_or_else(|| err("no graph [ ... ] block".into()))?;
    let atom = |items: &[(String, Value)], key: &str| {
        items.iter().find_map(|(k, v)| match v {
            Value::Atom(a) if k == key => Some(a.clone()),
            _ => None,
        })
    };
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for (i, (k, v)) in graph.iter().enumerate() {
        let Value::List(items) = v else { continue };
        match k.as_str() {
            "node" => {
                let id = atom(items, "id")
                    .ok_or_else(|| err(format!("node #{} has no id", nodes.len() + 1)))?;
                nodes.push((id, atom(items, "label")));
            }
            "edge" => {
                let end = |key: &str| {
                    atom(items, key)
                        .ok_or_else(|| err(format!("edge #{} has no {key}", edges.len() + 1)))
                };
                edges.push((
                    end("source")?,
                    end("target")?,
                    format!("graph item {}", i + 1),
                ));
            }
            _ => {}
        }
    }
    build_zoo(origin, nodes, edges)
}
