//! The `key=value` parameters of a generator expression.

use super::TopoError;
use std::collections::HashMap;

/// `key=value` pairs of a generator expression, checked to be all used.
pub(super) struct Params<'a> {
    spec: &'a str,
    values: HashMap<&'a str, u64>,
}

impl<'a> Params<'a> {
    pub(super) fn parse(spec: &'a str, args: &'a str) -> Result<Self, TopoError> {
        let mut values = HashMap::new();
        for kv in args.split(',').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                TopoError::invalid(spec, format!("parameter {kv:?} is not key=value"))
            })?;
            let v = v.trim().parse().map_err(|_| {
                TopoError::invalid(spec, format!("parameter {k}: {v:?} is not a whole number"))
            })?;
            if values.insert(k.trim(), v).is_some() {
                return Err(TopoError::invalid(
                    spec,
                    format!("parameter {k} given twice"),
                ));
            }
        }
        Ok(Params { spec, values })
    }

    pub(super) fn opt(&mut self, key: &str) -> Result<Option<usize>, TopoError> {
        self.values
            .remove(key)
            .map(|v| {
                usize::try_from(v)
                    .map_err(|_| TopoError::invalid(self.spec, format!("{key}={v} is too large")))
            })
            .transpose()
    }

    pub(super) fn req(&mut self, key: &str) -> Result<usize, TopoError> {
        self.opt(key)?
            .ok_or_else(|| TopoError::invalid(self.spec, format!("missing parameter {key}=")))
    }

    pub(super) fn finish(self) -> Result<(), TopoError> {
        match self.values.keys().next() {
            Some(k) => Err(TopoError::invalid(
                self.spec,
                format!("unknown parameter {k:?}"),
            )),
            None => Ok(()),
        }
    }
}
