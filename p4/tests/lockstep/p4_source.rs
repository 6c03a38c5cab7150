//! A purpose-built reader of `sr_int.p4`: headers, structs,
//! constants and controls with their actions, tables and counters.

use crate::tokens::{preprocess, tokenize, Cursor};
use std::collections::BTreeMap;

pub const P4_SOURCE: &str = include_str!("../../sr_int.p4");

#[derive(Debug)]
pub struct Header {
    pub fields: Vec<(String, u32)>,
    pub controller: Option<String>,
}

impl Header {
    pub fn bits(&self) -> u32 {
        self.fields.iter().map(|(_, w)| w).sum()
    }
    pub fn width(&self, field: &str) -> u32 {
        self.fields
            .iter()
            .find(|(n, _)| n == field)
            .unwrap_or_else(|| panic!("no field {field}"))
            .1
    }
    /// The fields of this header read from `bytes`, big-endian bit order.
    pub fn decode(&self, bytes: &[u8]) -> BTreeMap<String, u128> {
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
pub struct StructField {
    pub type_name: String,
    /// Bit width for `bit<N>` fields.
    pub width: Option<u32>,
    /// Size of a header stack.
    pub stack: Option<String>,
}

#[derive(Debug)]
pub struct Table {
    pub name: String,
    pub keys: Vec<(String, String)>,
    /// Action names as written, with their `@defaultonly` flag.
    pub actions: Vec<(String, bool)>,
    pub default_action: String,
    pub size: u64,
}

#[derive(Debug)]
pub struct Counter {
    pub name: String,
    pub size: u64,
    pub kind: String,
}

#[derive(Debug, Default)]
pub struct Control {
    pub name: String,
    /// Parameter name -> type name (`hdr` -> `headers_t`).
    pub params: BTreeMap<String, String>,
    pub actions: Vec<(String, Vec<(String, u32)>)>,
    pub tables: Vec<Table>,
    pub counters: Vec<Counter>,
}

#[derive(Debug, Default)]
pub struct Program {
    pub defines: BTreeMap<String, String>,
    pub consts: BTreeMap<String, String>,
    pub headers: BTreeMap<String, Header>,
    pub structs: BTreeMap<String, BTreeMap<String, StructField>>,
    pub controls: Vec<Control>,
}

impl Program {
    pub fn parse(src: &str) -> Self {
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

    pub fn define(&self, name: &str) -> usize {
        self.defines[name].parse().expect("numeric #define")
    }

    pub fn constant(&self, name: &str) -> u64 {
        let v = &self.consts[name];
        match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => v.parse(),
        }
        .unwrap_or_else(|_| panic!("const {name} = {v} is not a number"))
    }

    pub fn header(&self, name: &str) -> &Header {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no header {name}"))
    }

    /// Bit width of an expression such as `hdr.ipv4.dst_addr` in `control`.
    pub fn width_of(&self, control: &Control, expr: &str) -> u32 {
        let parts: Vec<&str> = expr.split('.').collect();
        let [param, member, field] = parts.as_slice() else {
            panic!("unsupported key expression {expr}");
        };
        let st = &self.structs[&control.params[*param]];
        self.header(&st[*member].type_name).width(field)
    }
}

pub fn parse_control(c: &mut Cursor) -> Control {
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

pub fn parse_table(c: &mut Cursor) -> Table {
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

pub fn program() -> Program {
    Program::parse(P4_SOURCE)
}
