//! GML (`graph [ node [ id 0 label "A" ] edge [ source 0 target 1 ] ]`), the
//! other format of the Internet Topology Zoo. Read the same way as GraphML.
//!
//! The reader streams: one pass over the text, an explicit stack for the
//! nesting (so a file of a million `[` cannot overflow the call stack) and a
//! line counter that only moves forward (so loading stays linear).

use super::graphml::{build_zoo, ZooEdge, ZooNode};
use super::{LoadOptions, Place, TopoError, Topology};

/// A token and the line it starts on.
enum Token<'a> {
    Open,
    Close,
    /// A bare word (key, number) or a quoted string without its quotes.
    Word(&'a str, bool),
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Lexer<'a> {
    /// Moves `n` bytes on, counting the lines passed.
    fn advance(&mut self, n: usize) {
        let end = self.pos + n;
        self.line += self.text.as_bytes()[self.pos..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.pos = end;
    }

    fn skip_space(&mut self) {
        loop {
            let rest = &self.text[self.pos..];
            let trimmed = rest.trim_start();
            self.advance(rest.len() - trimmed.len());
            if trimmed.starts_with('#') {
                self.advance(trimmed.find('\n').unwrap_or(trimmed.len()));
            } else {
                return;
            }
        }
    }

    /// The next token and its line; `None` at the end.
    fn next(&mut self) -> Result<Option<(Token<'a>, usize)>, String> {
        self.skip_space();
        let line = self.line;
        let text = self.text;
        let rest = &text[self.pos..];
        let Some(c) = rest.chars().next() else {
            return Ok(None);
        };
        let token = match c {
            '[' => {
                self.advance(1);
                Token::Open
            }
            ']' => {
                self.advance(1);
                Token::Close
            }
            '"' => {
                let end = rest[1..]
                    .find('"')
                    .ok_or_else(|| format!("line {line}: unterminated string"))?;
                self.advance(end + 2);
                Token::Word(&rest[1..end + 1], true)
            }
            _ => {
                let end = rest
                    .find(|c: char| c.is_whitespace() || c == '[' || c == ']')
                    .unwrap_or(rest.len());
                self.advance(end);
                Token::Word(&rest[..end], false)
            }
        };
        Ok(Some((token, line)))
    }
}

/// What the reader keeps of the list being read.
#[derive(Default)]
struct Item<'a> {
    id: Option<&'a str>,
    label: Option<&'a str>,
    source: Option<&'a str>,
    target: Option<&'a str>,
}

/// Where in the document a list sits: only `graph`'s `node` and `edge`
/// lists matter.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    Top,
    Graph,
    Node,
    Edge,
    Other,
}

pub(super) fn parse(text: &str, origin: &str, opts: &LoadOptions) -> Result<Topology, TopoError> {
    let (nodes, edges) =
        read(text).map_err(|m| TopoError::invalid(origin, format!("not valid GML: {m}")))?;
    let (nodes, edges) = match (nodes, edges) {
        (Some(n), Some(e)) => (n, e),
        _ => return Err(TopoError::invalid(origin, "no graph [ ... ] block")),
    };
    let nodes = nodes
        .into_iter()
        .enumerate()
        .map(|(i, (item, line))| {
            let id = item.id.ok_or_else(|| {
                TopoError::invalid(origin, format!("node #{} (line {line}) has no id", i + 1))
            })?;
            Ok(ZooNode {
                id,
                label: item.label.map(str::to_owned),
            })
        })
        .collect::<Result<Vec<_>, TopoError>>()?;
    let edges = edges
        .into_iter()
        .enumerate()
        .map(|(i, (item, line))| {
            let missing = |key: &str| {
                TopoError::invalid(
                    origin,
                    format!("edge #{} (line {line}) has no {key}", i + 1),
                )
            };
            Ok(ZooEdge {
                source: item.source.ok_or_else(|| missing("source"))?,
                target: item.target.ok_or_else(|| missing("target"))?,
                at: Place::Line(line),
            })
        })
        .collect::<Result<Vec<_>, TopoError>>()?;
    build_zoo(origin, nodes, edges, opts)
}

type Items<'a> = Vec<(Item<'a>, usize)>;

/// The node and edge lists of the first `graph` block (`None` without one).
fn read(text: &str) -> Result<(Option<Items<'_>>, Option<Items<'_>>), String> {
    let mut lx = Lexer {
        text,
        pos: 0,
        line: 1,
    };
    // The scopes of the open lists, innermost last, with the line each opened on.
    let mut stack: Vec<(Scope, usize)> = vec![(Scope::Top, 1)];
    let mut graphs = 0;
    let (mut nodes, mut edges) = (Vec::new(), Vec::new());
    let mut current = Item::default();
    loop {
        let scope = stack.last().expect("the top scope stays").0;
        let (key, line) = match lx.next()? {
            None if scope == Scope::Top => break,
            None => {
                let opened = stack.last().expect("not empty").1;
                return Err(format!("line {opened}: [ without a closing ]"));
            }
            Some((Token::Close, _)) if scope != Scope::Top => {
                let (done, line) = stack.pop().expect("not the top");
                match done {
                    Scope::Node => nodes.push((std::mem::take(&mut current), line)),
                    Scope::Edge => edges.push((std::mem::take(&mut current), line)),
                    _ => {}
                }
                continue;
            }
            Some((Token::Word(k, false), line)) => (k, line),
            Some((Token::Word(k, true), line)) => {
                return Err(format!("line {line}: expected a key, found \"{k}\""))
            }
            Some((Token::Open, line)) => {
                return Err(format!("line {line}: expected a key, found ["))
            }
            Some((Token::Close, line)) => {
                return Err(format!("line {line}: ] without an opening ["))
            }
        };
        match lx.next()? {
            Some((Token::Open, _)) => {
                let inner = match (scope, key) {
                    (Scope::Top, "graph") => {
                        graphs += 1;
                        if graphs == 1 {
                            Scope::Graph
                        } else {
                            Scope::Other
                        }
                    }
                    (Scope::Graph, "node") => Scope::Node,
                    (Scope::Graph, "edge") => Scope::Edge,
                    _ => Scope::Other,
                };
                stack.push((inner, line));
            }
            Some((Token::Word(v, _), _)) => {
                let slot = match (scope, key) {
                    (Scope::Node, "id") => &mut current.id,
                    (Scope::Node, "label") => &mut current.label,
                    (Scope::Edge, "source") => &mut current.source,
                    (Scope::Edge, "target") => &mut current.target,
                    _ => continue,
                };
                slot.get_or_insert(v);
            }
            Some((Token::Close, _)) | None => {
                return Err(format!("line {line}: key {key:?} has no value"))
            }
        }
    }
    if graphs == 0 {
        return Ok((None, None));
    }
    Ok((Some(nodes), Some(edges)))
}
