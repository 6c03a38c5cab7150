//! A reader of the P4Info text format, and the naming and numbering rules
//! p4c applies when it writes one.

use crate::p4_source::Control;
use crate::tokens::{tokenize, Cursor};

pub const P4INFO: &str = include_str!("../../sr_int.p4info.txtpb");

// ------------------------------------------------------------------ P4Info text format

#[derive(Debug)]
pub enum Value {
    Scalar(String),
    Message(Message),
}

#[derive(Debug, Default)]
pub struct Message(pub Vec<(String, Value)>);

impl Message {
    pub fn parse(text: &str) -> Self {
        let cleaned: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        let mut c = Cursor {
            toks: tokenize(&cleaned),
            at: 0,
        };
        let m = Self::parse_fields(&mut c);
        assert!(c.done(), "P4Info: trailing tokens at {}", c.at);
        m
    }

    pub fn parse_fields(c: &mut Cursor) -> Self {
        let mut fields = Vec::new();
        while !c.done() && c.peek() != "}" {
            let name = c.next();
            if c.peek() == ":" {
                c.next();
            }
            let value = if c.peek() == "{" {
                c.next();
                let m = Self::parse_fields(c);
                c.expect("}");
                Value::Message(m)
            } else {
                let v = c.next();
                Value::Scalar(unescape(v.trim_matches('"')))
            };
            fields.push((name, value));
        }
        Message(fields)
    }

    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Message> + 'a {
        self.0.iter().filter_map(move |(k, v)| match v {
            Value::Message(m) if k == key => Some(m),
            _ => None,
        })
    }

    pub fn msg(&self, key: &str) -> &Message {
        self.0
            .iter()
            .find_map(|(k, v)| match v {
                Value::Message(m) if k == key => Some(m),
                _ => None,
            })
            .unwrap_or_else(|| panic!("P4Info: no `{key}`"))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find_map(|(k, v)| match v {
            Value::Scalar(s) if k == key => Some(s.as_str()),
            _ => None,
        })
    }

    pub fn num(&self, key: &str) -> u64 {
        self.get(key)
            .unwrap_or_else(|| panic!("P4Info: no `{key}`"))
            .parse()
            .expect("P4Info number")
    }

    pub fn name(&self) -> &str {
        self.msg("preamble").get("name").expect("preamble name")
    }

    pub fn by_name<'a>(&'a self, kind: &'a str, name: &str) -> &'a Message {
        self.all(kind)
            .find(|m| m.name() == name)
            .unwrap_or_else(|| panic!("P4Info has no {kind} `{name}`"))
    }
}

pub fn unescape(s: &str) -> String {
    s.replace("\\\"", "\"").replace("\\\\", "\\")
}

/// (id, name, bitwidth) of the `params` / `match_fields` / `metadata` of `m`.
pub fn members(m: &Message, kind: &str) -> Vec<(u64, String, u32)> {
    m.all(kind)
        .map(|f| {
            (
                f.num("id"),
                f.get("name").expect("name").to_string(),
                f.num("bitwidth") as u32,
            )
        })
        .collect()
}

/// Numbered 1.. in declaration order, as p4c does.
pub fn numbered(fields: &[(String, u32)]) -> Vec<(u64, String, u32)> {
    (1..)
        .zip(fields)
        .map(|(i, (n, w))| (i, n.clone(), *w))
        .collect()
}

/// p4c's P4Runtime id: entity prefix in the top byte, Jenkins one-at-a-time
/// hash of the name in the low 24 bits.
pub fn p4c_id(prefix: u32, name: &str) -> u64 {
    let mut h: u32 = 0;
    for b in name.bytes() {
        h = h.wrapping_add(u32::from(b));
        h = h.wrapping_add(h << 10);
        h ^= h >> 6;
    }
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h = h.wrapping_add(h << 15);
    u64::from((prefix << 24) | (h & 0x00ff_ffff))
}

pub fn p4info() -> Message {
    Message::parse(P4INFO)
}

/// A table's action as P4Info names it: core.p4's `NoAction` is global.
pub fn qualified(control: &Control, action: &str) -> String {
    if control.actions.iter().any(|(n, _)| n == action) {
        format!("{}.{action}", control.name)
    } else {
        action.to_string()
    }
}
