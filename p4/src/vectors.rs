//! Packet test vectors (`p4/tests/vectors/*.json`, format in
//! p4/README.md): table entries, input frames, expected output frames with masks,
//! expected counters. The same files are replayed on bmv2 where it exists,
//! which is what keeps this switch and `sr_int.p4` in lock-step.

use crate::counters::Counters;
use crate::packet::PacketBuf;
use crate::pipeline::Pipeline;
use crate::tables::{Entry, NamedEntry, NamedMatch, Tables, WriteOp};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum VectorFile {
    Many { vectors: Vec<Vector> },
    One(Box<Vector>),
}

#[derive(Debug, Clone, Deserialize)]
pub struct Vector {
    pub name: String,
    #[serde(default)]
    pub about: String,
    #[serde(default = "default_cpu_port")]
    pub cpu_port: u16,
    /// Ports with an interface. Left out: every port a packet or an expected
    /// frame names. Frames sent to any other port are counted and lost.
    #[serde(default)]
    pub ports: Option<Vec<u16>>,
    #[serde(default)]
    pub entries: Vec<JsonEntry>,
    pub packets: Vec<JsonPacket>,
    #[serde(default)]
    pub expect: Vec<JsonExpect>,
    #[serde(default)]
    pub counters: Vec<JsonCounter>,
}

fn default_cpu_port() -> u16 {
    255
}

#[derive(Debug, Clone, Deserialize)]
pub struct JsonEntry {
    pub table: String,
    #[serde(default)]
    pub default: bool,
    #[serde(default, rename = "match")]
    pub matches: Vec<JsonMatch>,
    pub action: String,
    #[serde(default)]
    pub params: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct JsonMatch {
    pub field: String,
    pub exact: Option<String>,
    pub lpm: Option<String>,
    pub prefix_len: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct JsonPacket {
    pub port: u16,
    pub data: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct JsonExpect {
    pub port: u16,
    pub data: String,
    pub mask: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct JsonCounter {
    pub name: String,
    pub index: usize,
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a vector file: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error("{0}")]
    Bad(String),
}

/// Decodes hex with an optional `0x` prefix; whitespace and `:` are ignored.
pub fn decode_hex(s: &str) -> Result<Vec<u8>, VectorError> {
    let s = s.trim();
    let s = s.strip_prefix("0x").unwrap_or(s);
    let digits: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b':')
        .collect();
    let nibble = |c: u8| {
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| VectorError::Bad(format!("not hex: {s:?}")))
    };
    // An odd digit count is a value like "0x7": pad on the left.
    let padded: Vec<u8> = if digits.len() % 2 == 1 {
        std::iter::once(b'0').chain(digits).collect()
    } else {
        digits
    };
    padded
        .chunks_exact(2)
        .map(|p| Ok(nibble(p[0])? << 4 | nibble(p[1])?))
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Reads one vector file (a single vector or `{"vectors": [...]}`).
pub fn load(path: &Path) -> Result<Vec<Vector>, VectorError> {
    let text = std::fs::read_to_string(path).map_err(|source| VectorError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let file: VectorFile = serde_json::from_str(&text).map_err(|source| VectorError::Json {
        path: path.display().to_string(),
        source,
    })?;
    Ok(match file {
        VectorFile::Many { vectors } => vectors,
        VectorFile::One(v) => vec![*v],
    })
}

impl JsonEntry {
    pub fn to_named(&self) -> Result<NamedEntry, VectorError> {
        let matches = self
            .matches
            .iter()
            .map(|m| {
                let (value, prefix_len) = match (&m.exact, &m.lpm) {
                    (Some(v), None) => (decode_hex(v)?, None),
                    (None, Some(v)) => (decode_hex(v)?, Some(m.prefix_len.unwrap_or(32))),
                    _ => {
                        return Err(VectorError::Bad(format!(
                            "{}: match on {} needs exactly one of exact/lpm",
                            self.table, m.field
                        )))
                    }
                };
                Ok(NamedMatch {
                    field: m.field.clone(),
                    value,
                    prefix_len,
                })
            })
            .collect::<Result<_, _>>()?;
        let params = self
            .params
            .iter()
            .map(|(k, v)| Ok((k.clone(), decode_hex(v)?)))
            .collect::<Result<_, VectorError>>()?;
        Ok(NamedEntry {
            table: self.table.clone(),
            is_default: self.default,
            matches,
            action: self.action.clone(),
            params,
        })
    }

    /// The typed entry and the write that installs it (defaults are modified).
    pub fn to_write(&self) -> Result<(WriteOp, Entry), VectorError> {
        let entry = Entry::from_named(&self.to_named()?)
            .map_err(|e| VectorError::Bad(format!("{}: {e}", self.table)))?;
        let op = if self.default {
            WriteOp::Modify
        } else {
            WriteOp::Insert
        };
        Ok((op, entry))
    }
}

/// Installs the vector's entries in fresh tables.
pub fn tables_for(v: &Vector) -> Result<Tables, VectorError> {
    let mut tables = Tables::default();
    for e in &v.entries {
        let (op, entry) = e.to_write()?;
        tables
            .apply(op, entry)
            .map_err(|err| VectorError::Bad(format!("{}: {err}", e.table)))?;
    }
    Ok(tables)
}

/// Runs a vector through the pipeline; `Err` lists every mismatch.
pub fn run(v: &Vector) -> Result<(), VectorError> {
    let tables = tables_for(v)?;
    let counters = Counters::default();
    let pipeline = Pipeline::new(v.cpu_port);
    let mut outputs: BTreeMap<u16, Vec<Vec<u8>>> = BTreeMap::new();
    let mut pkt = PacketBuf::new();
    for (i, p) in v.packets.iter().enumerate() {
        let frame = decode_hex(&p.data)?;
        pkt.load(&frame)
            .map_err(|e| VectorError::Bad(format!("packet {i}: {e}")))?;
        let ts = 1_000 + i as u64;
        if let Some(port) = pipeline.process(&tables, &counters, &mut pkt, p.port, ts) {
            let wired = port == v.cpu_port
                || match &v.ports {
                    None => true,
                    Some(ports) => ports.contains(&port),
                };
            if wired {
                outputs.entry(port).or_default().push(pkt.data().to_vec());
            }
        }
    }
    let mut expected: BTreeMap<u16, Vec<&JsonExpect>> = BTreeMap::new();
    for e in &v.expect {
        expected.entry(e.port).or_default().push(e);
    }
    let mut problems = Vec::new();
    let ports: std::collections::BTreeSet<u16> =
        outputs.keys().chain(expected.keys()).copied().collect();
    for port in ports {
        let got = outputs.get(&port).map_or(&[][..], Vec::as_slice);
        let want = expected.get(&port).map_or(&[][..], Vec::as_slice);
        if got.len() != want.len() {
            problems.push(format!(
                "port {port}: {} frames out, {} expected; got [{}]",
                got.len(),
                want.len(),
                got.iter().map(|f| hex(f)).collect::<Vec<_>>().join(", ")
            ));
            continue;
        }
        for (n, (g, w)) in got.iter().zip(want).enumerate() {
            if let Some(p) = compare(g, w)? {
                problems.push(format!("port {port} frame {n}: {p}"));
            }
        }
    }
    for c in &v.counters {
        let Some((packets, bytes)) = counters.read(&c.name, c.index) else {
            problems.push(format!("no counter {}[{}]", c.name, c.index));
            continue;
        };
        if c.packets.is_some_and(|p| p != packets) || c.bytes.is_some_and(|b| b != bytes) {
            problems.push(format!(
                "{}[{}]: {packets} packets / {bytes} bytes, expected {:?} / {:?}",
                c.name, c.index, c.packets, c.bytes
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(VectorError::Bad(format!(
            "{}: {}",
            v.name,
            problems.join("; ")
        )))
    }
}

/// `None` when `got` matches the expectation under its mask.
fn compare(got: &[u8], want: &JsonExpect) -> Result<Option<String>, VectorError> {
    let data = decode_hex(&want.data)?;
    let mask = match &want.mask {
        Some(m) => decode_hex(m)?,
        None => vec![0xff; data.len()],
    };
    if mask.len() != data.len() {
        return Err(VectorError::Bad("mask and data differ in length".into()));
    }
    if got.len() != data.len() {
        return Ok(Some(format!(
            "{} bytes, expected {}: got {}",
            got.len(),
            data.len(),
            hex(got)
        )));
    }
    let bad: Vec<usize> = (0..got.len())
        .filter(|&i| (got[i] ^ data[i]) & mask[i] != 0)
        .collect();
    Ok((!bad.is_empty()).then(|| {
        format!(
            "bytes {:?} differ: got {}, expected {}",
            &bad[..bad.len().min(8)],
            hex(got),
            hex(&data)
        )
    }))
}
