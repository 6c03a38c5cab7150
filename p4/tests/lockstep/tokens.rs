//! Tokens of P4 source and of the P4Info text format, and a cursor over
//! them, for the two readers.

use std::collections::BTreeMap;

/// Removes comments and preprocessor lines; returns the `#define`s.
pub fn preprocess(src: &str) -> (String, BTreeMap<String, String>) {
    let mut out = String::with_capacity(src.len());
    let mut defines = BTreeMap::new();
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else if rest.starts_with('#') && (out.is_empty() || out.ends_with('\n')) {
            let end = rest.find('\n').unwrap_or(rest.len());
            let words: Vec<&str> = rest[..end].split_whitespace().collect();
            if let ["#define", name, value] = words.as_slice() {
                defines.insert(name.to_string(), value.to_string());
            }
            rest = &rest[end..];
        } else {
            let c = rest.chars().next().expect("non-empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    (out, defines)
}

/// Identifiers and numbers (letters, digits, `_`), strings (kept with their
/// quotes) and single punctuation characters.
pub fn tokenize(src: &str) -> Vec<String> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            toks.push(chars[start..i].iter().collect());
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            toks.push(chars[start..i.min(chars.len())].iter().collect());
        } else {
            toks.push(c.to_string());
            i += 1;
        }
    }
    toks
}

pub struct Cursor {
    pub toks: Vec<String>,
    pub at: usize,
}

impl Cursor {
    pub fn peek(&self) -> &str {
        self.toks.get(self.at).map_or("", String::as_str)
    }
    pub fn next(&mut self) -> String {
        let t = self.peek().to_string();
        self.at += 1;
        t
    }
    pub fn done(&self) -> bool {
        self.at >= self.toks.len()
    }
    pub fn expect(&mut self, want: &str) {
        let got = self.next();
        assert_eq!(
            got, want,
            "P4 parse: expected `{want}` at token {}",
            self.at
        );
    }
    /// Skips a balanced `open ... close` group starting at the current token.
    pub fn skip_group(&mut self, open: &str, close: &str) -> Vec<String> {
        self.expect(open);
        let start = self.at;
        let mut depth = 1;
        while depth > 0 {
            assert!(!self.done(), "P4 parse: unbalanced `{open}`");
            let t = self.next();
            if t == open {
                depth += 1;
            } else if t == close {
                depth -= 1;
            }
        }
        self.toks[start..self.at - 1].to_vec()
    }
    /// Skips one declaration: up to its `;` or through its `{ ... }` body.
    pub fn skip_item(&mut self) {
        while !self.done() {
            match self.peek() {
                "{" => {
                    self.skip_group("{", "}");
                    return;
                }
                "(" => {
                    self.skip_group("(", ")");
                }
                ";" => {
                    self.next();
                    return;
                }
                _ => {
                    self.next();
                }
            }
        }
    }
    /// `bit < N >`.
    pub fn bit_type(&mut self) -> u32 {
        self.expect("bit");
        self.expect("<");
        let w = self.next().parse().expect("P4 parse: bit width");
        self.expect(">");
        w
    }
}
