//! Lock-step between `sr_int.p4`, its P4Info, `intpath_core::wire` and the
//! reference switch's pipeline schema.
//!
//! No p4c exists where CI runs, so nothing else would notice the P4 program and
//! the Rust side drifting apart. This test reads the P4 source with a small
//! purpose-built parser (headers, structs, constants, controls with their
//! actions, tables and counters), reads the P4Info text format with another,
//! and checks that the three descriptions of the pipeline say the same thing:
//! names, bit widths, match kinds, sizes, ids and byte layouts.

use intpath_core::wire::*;
use intpath_switch::schema;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;

const P4_SOURCE: &str = include_str!("../sr_int.p4");
const P4INFO: &str = include_str!("../sr_int.p4info.txtpb");

// ------------------------------------------------------------------ tokens

/// Removes comments and preprocessor lines; returns the `#define`s.
fn preprocess(src: &str) -> (String, BTreeMap<String, String>) {
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
fn tokenize(src: &str) -> Vec<String> {
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

struct Cursor {
    toks: Vec<String>,
    at: usize,
}

impl Cursor {
    fn peek(&self) -> &str {
        self.toks.get(self.at).map_or("", String::as_str)
    }
    fn next(&mut self) -> String {
        let t = self.peek().to_string();
        self.at += 1;
        t
    }
    fn done(&self) -> bool {
        self.at >= self.toks.len()
    }
    fn expect(&mut self, want: &str) {
        let got = self.next();
        assert_eq!(
            got, want,
            "P4 parse: expected `{want}` at token {}",
            self.at
        );
    }
    /// Skips a balanced `open ... close` group starting at the current token.
    fn skip_group(&mut self, open: &str, close: &str) -> Vec<String> {
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
    fn skip_item(&mut self) {
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
    fn bit_type(&mut self) -> u32 {
        self.expect("bit");
        self.expect("<");
        let w = self.next().parse().expect("P4 parse: bit width");
        self.expect(">");
        w
    }
}

// ------------------------------------------------------------------ P4 model

#[derive(Debug)]
struct Header {
    fields: Vec<(String, u32)>,
    controller: Option<String>,
}

impl Header {
    fn bits(&self) -> u32 {
        self.fields.iter().map(|(_, w)| w).sum()
    }
    fn width(&self, field: &str) -> u32 {
        self.fields
            .iter()
            .find(|(n, _)| n == field)
            .unwrap_or_else(|| panic!("no field {field}"))
            .1
    }
    /// The fields of this header read from `bytes`, big-endian bit order.
    fn decode(&self, bytes: &[u8]) -> BTreeMap<String, u128> {
        let mut bit = 0usize;
        let mut out = BTreeMap::new();
        for (name, w) in &self.fields {
            let mut v: u128 = 0;
            for b in bit..bit + *w as usize {
                v = (v << 1) | u128::from((bytes[b / 8] >> (7 - b % 8)) & 1);
            }
            bit += *w as usize;
            out.insert(name.clone(), v);
        }
        out
    }
}

#[derive(Debug)]
struct StructField {
    type_name: String,
    /// Bit width for `bit<N>` fields.
    width: Option<u32>,
    /// Size of a header stack.
    stack: Option<String>,
}

#[derive(Debug)]
struct Table {
    name: String,
    keys: Vec<(String, String)>,
    /// Action names as written, with their `@defaultonly` flag.
    actions: Vec<(String, bool)>,
    default_action: String,
    size: u64,
}

#[derive(Debug)]
struct Counter {
    name: String,
    size: u64,
    kind: String,
}

#[derive(Debug, Default)]
struct Control {
    name: String,
    /// Parameter name -> type name (`hdr` -> `headers_t`).
    params: BTreeMap<String, String>,
    actions: Vec<(String, Vec<(String, u32)>)>,
    tables: Vec<Table>,
    counters: Vec<Counter>,
}

#[derive(Debug, Default)]
struct Program {
    defines: BTreeMap<String, String>,
    consts: BTreeMap<String, String>,
    headers: BTreeMap<String, Header>,
    structs: BTreeMap<String, BTreeMap<String, StructField>>,
    controls: Vec<Control>,
}

impl Program {
    fn parse(src: &str) -> Self {
        let (text, defines) = preprocess(src);
        let mut c = Cursor {
            toks: tokenize(&text),
            at: 0,
        };
        let mut p = Program {
            defines,
            ..Default::default()
        };
        let mut controller = None;
        while !c.done() {
            match c.peek() {
                "@" => {
                    c.next();
                    let name = c.next();
                    if c.peek() == "(" {
                        let args = c.skip_group("(", ")");
                        if name == "controller_header" {
                            controller = Some(args[0].trim_matches('"').to_string());
                        }
                    }
                }
                "header" => {
                    c.next();
                    let name = c.next();
                    c.expect("{");
                    let mut fields = Vec::new();
                    while c.peek() != "}" {
                        let w = c.bit_type();
                        fields.push((c.next(), w));
                        c.expect(";");
                    }
                    c.expect("}");
                    p.headers.insert(
                        name,
                        Header {
                            fields,
                            controller: controller.take(),
                        },
                    );
                }
                "struct" => {
                    c.next();
                    let name = c.next();
                    c.expect("{");
                    let mut fields = BTreeMap::new();
                    while c.peek() != "}" {
                        let (type_name, width) = if c.peek() == "bit" {
                            let w = c.bit_type();
                            (format!("bit<{w}>"), Some(w))
                        } else {
                            (c.next(), None)
                        };
                        let stack = (c.peek() == "[").then(|| c.skip_group("[", "]").concat());
                        let field = c.next();
                        c.expect(";");
                        fields.insert(
                            field,
                            StructField {
                                type_name,
                                width,
                                stack,
                            },
                        );
                    }
                    c.expect("}");
                    p.structs.insert(name, fields);
                }
                "const" => {
                    c.next();
                    let mut decl = Vec::new();
                    while c.peek() != "=" {
                        decl.push(c.next());
                    }
                    c.expect("=");
                    let mut value = String::new();
                    while c.peek() != ";" {
                        value.push_str(&c.next());
                    }
                    c.expect(";");
                    p.consts
                        .insert(decl.last().expect("const name").clone(), value);
                }
                "control" => {
                    c.next();
                    p.controls.push(parse_control(&mut c));
                }
                _ => c.skip_item(),
            }
        }
        p
    }

    fn define(&self, name: &str) -> usize {
        self.defines[name].parse().expect("numeric #define")
    }

    fn constant(&self, name: &str) -> u64 {
        let v = &self.consts[name];
        match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => v.parse(),
        }
        .unwrap_or_else(|_| panic!("const {name} = {v} is not a number"))
    }

    fn header(&self, name: &str) -> &Header {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no header {name}"))
    }

    /// Bit width of an expression such as `hdr.ipv4.dst_addr` in `control`.
    fn width_of(&self, control: &Control, expr: &str) -> u32 {
        let parts: Vec<&str> = expr.split('.').collect();
        let [param, member, field] = parts.as_slice() else {
            panic!("unsupported key expression {expr}");
        };
        let st = &self.structs[&control.params[*param]];
        self.header(&st[*member].type_name).width(field)
    }
}

fn parse_control(c: &mut Cursor) -> Control {
    let mut ctl = Control {
        name: c.next(),
        ..Default::default()
    };
    let params = c.skip_group("(", ")");
    for p in params.split(|t| t == ",") {
        if let [.., ty, name] = p {
            ctl.params.insert(name.clone(), ty.clone());
        }
    }
    c.expect("{");
    while c.peek() != "}" {
        match c.peek() {
            "action" => {
                c.next();
                let name = c.next();
                let params = c.skip_group("(", ")");
                let mut ps = Vec::new();
                for p in params.split(|t| t == ",").filter(|p| !p.is_empty()) {
                    let mut pc = Cursor {
                        toks: p.to_vec(),
                        at: 0,
                    };
                    let w = pc.bit_type();
                    ps.push((pc.next(), w));
                }
                c.skip_group("{", "}");
                ctl.actions.push((name, ps));
            }
            "table" => {
                c.next();
                ctl.tables.push(parse_table(c));
            }
            "counter" => {
                c.next();
                let args = c.skip_group("(", ")");
                let name = c.next();
                c.expect(";");
                ctl.counters.push(Counter {
                    name,
                    size: args[0].parse().expect("counter size"),
                    kind: args.last().expect("counter type").clone(),
                });
            }
            _ => c.skip_item(),
        }
    }
    c.expect("}");
    ctl
}

fn parse_table(c: &mut Cursor) -> Table {
    let mut t = Table {
        name: c.next(),
        keys: Vec::new(),
        actions: Vec::new(),
        default_action: String::new(),
        size: 0,
    };
    c.expect("{");
    while c.peek() != "}" {
        let prop = c.next();
        if prop == "const" {
            continue;
        }
        c.expect("=");
        match prop.as_str() {
            "key" => {
                let body = c.skip_group("{", "}");
                for k in body.split(|t| t == ";").filter(|k| !k.is_empty()) {
                    let colon = k.iter().position(|t| t == ":").expect("key `:`");
                    t.keys.push((k[..colon].concat(), k[colon + 1].clone()));
                }
            }
            "actions" => {
                let body = c.skip_group("{", "}");
                for a in body.split(|t| t == ";").filter(|a| !a.is_empty()) {
                    let default_only = a.starts_with(&["@".to_string(), "defaultonly".to_string()]);
                    t.actions
                        .push((a.last().expect("action").clone(), default_only));
                }
            }
            "default_action" => {
                t.default_action = c.next();
                c.skip_item();
            }
            "size" => {
                t.size = c.next().parse().expect("table size");
                c.expect(";");
            }
            other => panic!("unexpected table property {other}"),
        }
    }
    c.expect("}");
    t
}

// ------------------------------------------------------------------ P4Info text format

#[derive(Debug)]
enum Value {
    Scalar(String),
    Message(Message),
}

#[derive(Debug, Default)]
struct Message(Vec<(String, Value)>);

impl Message {
    fn parse(text: &str) -> Self {
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

    fn parse_fields(c: &mut Cursor) -> Self {
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

    fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Message> + 'a {
        self.0.iter().filter_map(move |(k, v)| match v {
            Value::Message(m) if k == key => Some(m),
            _ => None,
        })
    }

    fn msg(&self, key: &str) -> &Message {
        self.0
            .iter()
            .find_map(|(k, v)| match v {
                Value::Message(m) if k == key => Some(m),
                _ => None,
            })
            .unwrap_or_else(|| panic!("P4Info: no `{key}`"))
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find_map(|(k, v)| match v {
            Value::Scalar(s) if k == key => Some(s.as_str()),
            _ => None,
        })
    }

    fn num(&self, key: &str) -> u64 {
        self.get(key)
            .unwrap_or_else(|| panic!("P4Info: no `{key}`"))
            .parse()
            .expect("P4Info number")
    }

    fn name(&self) -> &str {
        self.msg("preamble").get("name").expect("preamble name")
    }

    fn by_name<'a>(&'a self, kind: &'a str, name: &str) -> &'a Message {
        self.all(kind)
            .find(|m| m.name() == name)
            .unwrap_or_else(|| panic!("P4Info has no {kind} `{name}`"))
    }
}

fn unescape(s: &str) -> String {
    s.replace("\\\"", "\"").replace("\\\\", "\\")
}

/// (id, name, bitwidth) of the `params` / `match_fields` / `metadata` of `m`.
fn members(m: &Message, kind: &str) -> Vec<(u64, String, u32)> {
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
fn numbered(fields: &[(String, u32)]) -> Vec<(u64, String, u32)> {
    (1..)
        .zip(fields)
        .map(|(i, (n, w))| (i, n.clone(), *w))
        .collect()
}

/// p4c's P4Runtime id: entity prefix in the top byte, Jenkins one-at-a-time
/// hash of the name in the low 24 bits.
fn p4c_id(prefix: u32, name: &str) -> u64 {
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

fn program() -> Program {
    Program::parse(P4_SOURCE)
}

fn p4info() -> Message {
    Message::parse(P4INFO)
}

/// A table's action as P4Info names it: core.p4's `NoAction` is global.
fn qualified(control: &Control, action: &str) -> String {
    if control.actions.iter().any(|(n, _)| n == action) {
        format!("{}.{action}", control.name)
    } else {
        action.to_string()
    }
}

// ------------------------------------------------------------------ P4 <-> P4Info

#[test]
fn p4_parser_sees_the_whole_program() {
    let p = program();
    let names: Vec<&str> = p.controls.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"SrIntIngress") && names.contains(&"SrIntEgress"));
    assert_eq!(p.controls.iter().map(|c| c.tables.len()).sum::<usize>(), 4);
    assert_eq!(
        p.controls.iter().map(|c| c.counters.len()).sum::<usize>(),
        3
    );
    assert_eq!(
        p.headers
            .values()
            .filter(|h| h.controller.is_some())
            .count(),
        2
    );
}

#[test]
fn tables_match_p4info() {
    let (p, info) = (program(), p4info());
    let mut declared = Vec::new();
    for ctl in &p.controls {
        for t in &ctl.tables {
            let full = format!("{}.{}", ctl.name, t.name);
            let it = info.by_name("tables", &full);
            let keys: Vec<(u64, String, u32)> = (1..)
                .zip(&t.keys)
                .map(|(i, (expr, _))| (i, expr.clone(), p.width_of(ctl, expr)))
                .collect();
            assert_eq!(members(it, "match_fields"), keys, "{full} key");
            let kinds: Vec<String> = it
                .all("match_fields")
                .map(|m| m.get("match_type").expect("match_type").to_string())
                .collect();
            let want: Vec<String> = t.keys.iter().map(|(_, k)| k.to_uppercase()).collect();
            assert_eq!(kinds, want, "{full} match kinds");
            let refs: Vec<(u64, bool)> = it
                .all("action_refs")
                .map(|r| (r.num("id"), r.get("scope") == Some("DEFAULT_ONLY")))
                .collect();
            let want: Vec<(u64, bool)> = t
                .actions
                .iter()
                .map(|(a, d)| (p4c_id(0x01, &qualified(ctl, a)), *d))
                .collect();
            assert_eq!(refs, want, "{full} action refs");
            assert!(
                t.actions.iter().any(|(a, _)| *a == t.default_action),
                "{full}: default action {} not in its action list",
                t.default_action
            );
            assert_eq!(it.num("size"), t.size, "{full} size");
            assert!(it.get("const_default_action_id").is_none(), "{full}");
            declared.push(full);
        }
    }
    let in_info: Vec<&str> = info.all("tables").map(Message::name).collect();
    assert_eq!(in_info, declared, "tables in P4Info vs sr_int.p4");
}

#[test]
fn actions_match_p4info() {
    let (p, info) = (program(), p4info());
    let mut declared = BTreeMap::new();
    for ctl in &p.controls {
        for (name, params) in &ctl.actions {
            declared.insert(format!("{}.{name}", ctl.name), params.clone());
        }
        for t in &ctl.tables {
            if t.actions.iter().any(|(a, _)| a == "NoAction") {
                declared.insert("NoAction".to_string(), Vec::new());
            }
        }
    }
    let in_info: BTreeMap<String, Vec<(u64, String, u32)>> = info
        .all("actions")
        .map(|a| (a.name().to_string(), members(a, "params")))
        .collect();
    let want: BTreeMap<String, Vec<(u64, String, u32)>> = declared
        .iter()
        .map(|(n, ps)| (n.clone(), numbered(ps)))
        .collect();
    assert_eq!(in_info, want, "actions and parameters");
}

#[test]
fn counters_match_p4info() {
    let (p, info) = (program(), p4info());
    let mut n = 0;
    for ctl in &p.controls {
        for c in &ctl.counters {
            let full = format!("{}.{}", ctl.name, c.name);
            let ic = info.by_name("counters", &full);
            assert_eq!(ic.num("size"), c.size, "{full} size");
            let unit = match c.kind.as_str() {
                "packets_and_bytes" => "BOTH",
                "packets" => "PACKETS",
                "bytes" => "BYTES",
                other => panic!("counter type {other}"),
            };
            assert_eq!(ic.msg("spec").get("unit"), Some(unit), "{full} unit");
            n += 1;
        }
    }
    assert_eq!(info.all("counters").count(), n, "counters in P4Info");
}

#[test]
fn controller_headers_match_p4info() {
    let (p, info) = (program(), p4info());
    let mut n = 0;
    for h in p.headers.values() {
        let Some(name) = &h.controller else { continue };
        let im = info.by_name("controller_packet_metadata", name);
        assert_eq!(members(im, "metadata"), numbered(&h.fields), "{name}");
        let ann = format!("@controller_header(\"{name}\")");
        assert_eq!(im.msg("preamble").get("annotations"), Some(ann.as_str()));
        n += 1;
    }
    assert_eq!(info.all("controller_packet_metadata").count(), n);
}

#[test]
fn p4info_ids_are_the_ones_p4c_assigns() {
    let (p, info) = (program(), p4info());
    let mut seen = BTreeMap::new();
    let mut check = |kind: &str, prefix: u32, hashed: &dyn Fn(&str) -> String| {
        for m in info.all(kind) {
            let pre = m.msg("preamble");
            let id = pre.num("id");
            assert_eq!(id, p4c_id(prefix, &hashed(m.name())), "{kind} {}", m.name());
            let alias = m.name().rsplit('.').next().expect("alias");
            assert_eq!(pre.get("alias"), Some(alias), "{kind} alias");
            assert!(
                seen.insert(id, m.name().to_string()).is_none(),
                "id {id} twice"
            );
        }
    };
    check("actions", 0x01, &|n| n.to_string());
    check("tables", 0x02, &|n| n.to_string());
    check("counters", 0x12, &|n| n.to_string());
    // Controller headers are hashed by their header type's name.
    let type_of = |name: &str| {
        p.headers
            .iter()
            .find(|(_, h)| h.controller.as_deref() == Some(name))
            .map(|(t, _)| t.clone())
            .expect("controller header type")
    };
    check("controller_packet_metadata", 0x04, &type_of);
    assert_eq!(info.msg("pkg_info").get("arch"), Some("v1model"));
}

// ------------------------------------------------------------------ P4 <-> intpath_core::wire

#[test]
fn constants_and_stacks_match_core() {
    let p = program();
    assert_eq!(p.define("MAX_HOPS"), MAX_HOPS);
    assert_eq!(MAX_HOPS, max_hops(DEFAULT_MTU));
    assert_eq!(p.constant("SRINT_UDP_PORT"), u64::from(SRINT_UDP_PORT));
    assert_eq!(p.constant("SR_FLAG_DONE"), u64::from(SR_FLAG_DONE));
    assert_eq!(p.constant("INT_RECORD_WORDS"), u64::from(INT_RECORD_WORDS));
    assert_eq!(p.constant("IPV4_HEADER_LEN"), IPV4_HEADER_LEN as u64);
    assert_eq!(p.constant("IP_PROTO_UDP"), u64::from(IP_PROTO_UDP));
    assert_eq!(
        p.constant("PROBE_UDP_FIXED") as usize,
        UDP_HEADER_LEN + SR_HEADER_LEN + INT_HEADER_LEN + PROBE_PAYLOAD_LEN
    );
    // intpath's default CPU port (p4/README.md).
    assert_eq!(p.constant("CPU_PORT"), 255);

    let hdrs = &p.structs["headers_t"];
    for (field, elem) in [("labels", "sr_label_t"), ("records", "int_record_t")] {
        assert_eq!(hdrs[field].type_name, elem);
        assert_eq!(hdrs[field].stack.as_deref(), Some("MAX_HOPS"), "{field}");
    }
    let route_bits = (MAX_HOPS * SR_LABEL_LEN * 8) as u32;
    assert_eq!(p.structs["metadata_t"]["route"].width, Some(route_bits));
    let ingress = p
        .controls
        .iter()
        .find(|c| c.name == "SrIntIngress")
        .unwrap();
    let push = &ingress
        .actions
        .iter()
        .find(|(n, _)| n == "push_route")
        .unwrap()
        .1;
    assert_eq!(push[1], ("labels".to_string(), route_bits));
}

/// The unrolled push_route block must set label i from the i-th 16-bit slice,
/// most significant first, for every i below MAX_HOPS.
#[test]
fn push_route_unroll_covers_every_label() {
    let begin = P4_SOURCE
        .find("BEGIN push_route unroll")
        .expect("unroll start");
    let end = P4_SOURCE.find("END push_route unroll").expect("unroll end");
    let lines: Vec<&str> = P4_SOURCE[begin..end]
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .collect();
    assert_eq!(lines.len(), MAX_HOPS);
    for (i, line) in lines.iter().enumerate() {
        let hi = (MAX_HOPS - i) * 16 - 1;
        let want = format!(
            "if (hdr.sr.num_labels > {i}) {{ hdr.labels[{i}].setValid(); \
             hdr.labels[{i}].port = meta.route[{hi}:{}]; }}",
            hi - 15
        );
        assert_eq!(*line, want, "label {i}");
    }
}

#[test]
fn header_sizes_match_core() {
    let p = program();
    for (h, len) in [
        ("ethernet_t", ETHERNET_HEADER_LEN),
        ("ipv4_t", IPV4_HEADER_LEN),
        ("udp_t", UDP_HEADER_LEN),
        ("sr_t", SR_HEADER_LEN),
        ("sr_label_t", SR_LABEL_LEN),
        ("int_t", INT_HEADER_LEN),
        ("int_record_t", INT_RECORD_LEN),
        ("probe_payload_t", PROBE_PAYLOAD_LEN),
        ("packet_in_header_t", CPU_HEADER_LEN),
        ("packet_out_header_t", CPU_HEADER_LEN),
    ] {
        assert_eq!(p.header(h).bits() as usize, len * 8, "{h}");
    }
}

fn fields(pairs: &[(&str, u128)]) -> BTreeMap<String, u128> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Bytes written by intpath_core, read back with the P4 header layouts: every
/// field sits where the P4 program expects it.
#[test]
fn field_layouts_match_core() {
    let p = program();

    let rec = IntRecordRepr {
        switch_id: 0x0102_0304,
        ingress_port: 0x0506,
        egress_port: 0x0708,
        ingress_ts: 0x1112_1314_1516_1718,
        egress_ts: 0x2122_2324_2526_2728,
        enq_qdepth: 0x3132_3334,
        deq_timedelta: 0x4142_4344,
    };
    let mut buf = [0u8; INT_RECORD_LEN];
    rec.emit(&mut IntRecord::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("int_record_t").decode(&buf),
        fields(&[
            ("switch_id", 0x0102_0304),
            ("ingress_port", 0x0506),
            ("egress_port", 0x0708),
            ("ingress_ts", 0x1112_1314_1516_1718),
            ("egress_ts", 0x2122_2324_2526_2728),
            ("enq_qdepth", 0x3132_3334),
            ("deq_timedelta", 0x4142_4344),
        ])
    );

    let sr = SrRepr {
        path_id: 0xabcd,
        flags: SR_FLAG_DONE,
        labels: vec![0x0102, 0x0304],
    };
    let mut buf = vec![0u8; sr.buffer_len()];
    sr.emit(&mut SrHeader::new_unchecked(&mut buf[..])).unwrap();
    assert_eq!(
        p.header("sr_t").decode(&buf),
        fields(&[
            ("path_id", 0xabcd),
            ("num_labels", 2),
            ("flags", u128::from(SR_FLAG_DONE))
        ])
    );
    for (i, label) in sr.labels.iter().enumerate() {
        let at = SR_HEADER_LEN + i * SR_LABEL_LEN;
        assert_eq!(
            p.header("sr_label_t").decode(&buf[at..]),
            fields(&[("port", u128::from(*label))])
        );
    }

    let int = IntRepr {
        remaining_hops: 0x21,
        records: vec![rec],
    };
    let mut buf = vec![0u8; int.buffer_len()];
    int.emit(&mut IntHeader::new_unchecked(&mut buf[..]))
        .unwrap();
    assert_eq!(
        p.header("int_t").decode(&buf),
        fields(&[
            ("hop_count", 1),
            ("remaining_hops", 0x21),
            ("record_words", u128::from(INT_RECORD_WORDS)),
            ("reserved", 0)
        ])
    );

    let pl = PayloadRepr {
        path_id: 0x0a0b,
        sequence: 0x0c0d_0e0f,
        send_ts: 0x1011_1213_1415_1617,
    };
    let mut buf = [0u8; PROBE_PAYLOAD_LEN];
    pl.emit(&mut ProbePayload::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("probe_payload_t").decode(&buf),
        fields(&[
            ("path_id", 0x0a0b),
            ("reserved", 0),
            ("sequence", 0x0c0d_0e0f),
            ("send_ts", 0x1011_1213_1415_1617)
        ])
    );

    let mut buf = [0xffu8; CPU_HEADER_LEN];
    PacketInRepr {
        ingress_port: 0x0102,
    }
    .emit(&mut PacketIn::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("packet_in_header_t").decode(&buf),
        fields(&[("ingress_port", 0x0102), ("_pad", 0)])
    );
    let mut buf = [0xffu8; CPU_HEADER_LEN];
    PacketOutRepr {
        egress_port: 0x0304,
    }
    .emit(&mut PacketOut::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("packet_out_header_t").decode(&buf),
        fields(&[("egress_port", 0x0304), ("_pad", 0)])
    );

    let mut buf = [0u8; ETHERNET_HEADER_LEN];
    EthernetRepr {
        dst: MacAddr([1, 2, 3, 4, 5, 6]),
        src: MacAddr([7, 8, 9, 10, 11, 12]),
        ethertype: EtherType::Ipv4,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut buf[..]));
    assert_eq!(
        p.header("ethernet_t").decode(&buf),
        fields(&[
            ("dst_addr", 0x0102_0304_0506),
            ("src_addr", 0x0708_090a_0b0c),
            ("ether_type", 0x0800)
        ])
    );

    let mut buf = [0u8; IPV4_HEADER_LEN];
    Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 1, 1),
        dst: Ipv4Addr::new(10, 0, 9, 9),
        protocol: IP_PROTO_UDP,
        ttl: 63,
        payload_len: 100,
    }
    .emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]))
    .unwrap();
    let ip = p.header("ipv4_t").decode(&buf);
    let checksum = u128::from(Ipv4Packet::new_unchecked(&buf[..]).header_checksum());
    assert_eq!(
        ip,
        fields(&[
            ("version", 4),
            ("ihl", 5),
            ("diffserv", 0),
            ("total_len", 120),
            ("identification", 0),
            ("flags", 0b010),
            ("frag_offset", 0),
            ("ttl", 63),
            ("protocol", u128::from(IP_PROTO_UDP)),
            ("hdr_checksum", checksum),
            ("src_addr", 0x0a00_0101),
            ("dst_addr", 0x0a00_0909),
        ])
    );

    let mut buf = [0xffu8; UDP_HEADER_LEN];
    UdpRepr {
        src_port: 0x1234,
        dst_port: SRINT_UDP_PORT,
        payload_len: 24,
    }
    .emit(&mut UdpPacket::new_unchecked(&mut buf[..]))
    .unwrap();
    assert_eq!(
        p.header("udp_t").decode(&buf),
        fields(&[
            ("src_port", 0x1234),
            ("dst_port", u128::from(SRINT_UDP_PORT)),
            ("len", 32),
            ("checksum", 0)
        ])
    );
}

// ------------------------------------------------------------------ P4Info <-> reference switch

#[test]
fn reference_switch_schema_matches_p4info() {
    let info = p4info();
    let action_name = |id: u64| {
        info.all("actions")
            .find(|a| a.msg("preamble").num("id") == id)
            .map(|a| a.name().to_string())
            .unwrap_or_else(|| panic!("action id {id} not in P4Info"))
    };
    assert_eq!(schema::TABLES.len(), info.all("tables").count(), "tables");
    for t in schema::TABLES {
        let it = info.by_name("tables", t.name);
        let keys: Vec<(u64, String, u32)> = (1..)
            .zip(t.keys)
            .map(|(i, k)| (i, k.field.name.to_string(), k.field.bitwidth))
            .collect();
        assert_eq!(members(it, "match_fields"), keys, "{} keys", t.name);
        let kinds: Vec<&str> = it
            .all("match_fields")
            .map(|m| m.get("match_type").expect("match_type"))
            .collect();
        let want: Vec<&str> = t.keys.iter().map(|k| k.kind.as_str()).collect();
        assert_eq!(kinds, want, "{} match kinds", t.name);
        let refs: Vec<(String, bool)> = it
            .all("action_refs")
            .map(|r| {
                (
                    action_name(r.num("id")),
                    r.get("scope") == Some("DEFAULT_ONLY"),
                )
            })
            .collect();
        let want: Vec<(String, bool)> = t
            .actions
            .iter()
            .map(|a| (a.to_string(), t.default_only.contains(a)))
            .collect();
        assert_eq!(refs, want, "{} actions", t.name);
        assert_eq!(it.num("size"), t.size, "{} size", t.name);
    }
    assert_eq!(
        schema::ACTIONS.len(),
        info.all("actions").count(),
        "actions"
    );
    for a in schema::ACTIONS {
        let params: Vec<(String, u32)> = a
            .params
            .iter()
            .map(|f| (f.name.to_string(), f.bitwidth))
            .collect();
        assert_eq!(
            members(info.by_name("actions", a.name), "params"),
            numbered(&params),
            "{}",
            a.name
        );
    }
    assert_eq!(schema::COUNTERS.len(), info.all("counters").count());
    for c in schema::COUNTERS {
        assert_eq!(
            info.by_name("counters", c.name).num("size"),
            c.size,
            "{}",
            c.name
        );
    }
    for h in schema::CONTROLLER_HEADERS {
        let md: Vec<(String, u32)> = h
            .metadata
            .iter()
            .map(|f| (f.name.to_string(), f.bitwidth))
            .collect();
        assert_eq!(
            members(
                info.by_name("controller_packet_metadata", h.name),
                "metadata"
            ),
            numbered(&md),
            "{}",
            h.name
        );
    }
}

// ------------------------------------------------------------------ vectors <-> intpath_core

/// The vectors are built by an independent Python re-implementation of the
/// wire format; intpath_core must read every probe they expect a switch to
/// emit, and refuse every probe the malformed vectors feed in.
#[test]
fn vector_probes_agree_with_core_parser() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let is_probe = |f: &[u8]| {
        f.len() >= 42
            && f[12..14] == [8, 0]
            && f[23] == IP_PROTO_UDP
            && f[36..38] == SRINT_UDP_PORT.to_be_bytes()
    };
    let (mut good, mut bad) = (0, 0);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/vectors")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("vector file");
        let json: serde_json::Value = serde_json::from_str(&text).expect("vector JSON");
        let vectors = match json.get("vectors") {
            Some(v) => v.as_array().expect("vectors array").clone(),
            None => vec![json],
        };
        for v in vectors {
            let name = v["name"].as_str().expect("name");
            let cpu = v["cpu_port"].as_u64().unwrap_or(255);
            let frame = |p: &serde_json::Value| {
                let hex = p["data"].as_str().expect("data");
                let bytes: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                    .collect();
                let skip = if p["port"].as_u64() == Some(cpu) {
                    CPU_HEADER_LEN
                } else {
                    0
                };
                bytes[skip..].to_vec()
            };
            for out in v["expect"].as_array().expect("expect") {
                let f = frame(out);
                if is_probe(&f) {
                    ProbeRepr::parse(&f)
                        .unwrap_or_else(|e| panic!("{name}: expected probe unreadable: {e}"));
                    good += 1;
                }
            }
            if name.starts_with("malformed_") {
                for input in v["packets"].as_array().expect("packets") {
                    let f = frame(input);
                    assert!(
                        ProbeRepr::parse(&f).is_err(),
                        "{name}: core accepts a malformed probe"
                    );
                    bad += 1;
                }
            }
        }
    }
    assert!(
        good >= 10 && bad >= 5,
        "too few probes checked: {good} good, {bad} bad"
    );
}
