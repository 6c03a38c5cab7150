//! Writing and reading entities: batched writes with per-update errors,
//! reads of table entries and counters by name.

use super::{Client, ClientError, UpdateFailure};
use crate::p4info::{P4InfoError, P4InfoIndex};
use crate::proto::google::rpc;
use crate::proto::p4::v1 as p4;
use prost::Message;
use std::sync::Arc;

impl Client {
    fn require_index(&self) -> Result<&Arc<P4InfoIndex>, ClientError> {
        self.index.as_ref().ok_or_else(|| ClientError::NoPipeline {
            target: self.config.target.clone(),
        })
    }

    /// Writes updates in batches (CONTINUE_ON_ERROR). Every rejected update
    /// is reported with its position, its rendering and the device's
    /// message; updates the device accepted stay written.
    pub async fn write(&self, updates: Vec<p4::Update>) -> Result<(), ClientError> {
        let total = updates.len();
        let mut rejected = 0;
        let mut failures = Vec::new();
        let mut offset = 0;
        let mut remaining = updates.into_iter().peekable();
        while remaining.peek().is_some() {
            let batch: Vec<p4::Update> = remaining
                .by_ref()
                .take(self.config.batch_size.max(1))
                .collect();
            let n = batch.len();
            if let Err(status) = self.write_batch(batch.clone()).await? {
                let (n, these) = self.update_failures(&status, &batch, offset);
                rejected += n;
                failures.extend(these);
            }
            offset += n;
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(ClientError::Write {
                target: self.config.target.clone(),
                total,
                rejected,
                failures,
            })
        }
    }

    /// Outer error: the RPC could not be made; inner: the device refused.
    async fn write_batch(
        &self,
        updates: Vec<p4::Update>,
    ) -> Result<Result<(), tonic::Status>, ClientError> {
        let mut grpc = self.grpc.clone();
        let request = p4::WriteRequest {
            device_id: self.config.target.device_id,
            role: self.config.role.clone(),
            election_id: self.election_id(),
            updates,
            atomicity: p4::write_request::Atomicity::ContinueOnError as i32,
            ..Default::default()
        };
        let timeout = self.config.rpc_timeout;
        match tokio::time::timeout(timeout, grpc.write(request)).await {
            Err(_) => Err(ClientError::Timeout {
                target: self.config.target.clone(),
                what: "Write",
                timeout,
            }),
            Ok(Ok(_)) => Ok(Ok(())),
            Ok(Err(status)) => match status.code() {
                tonic::Code::Unavailable | tonic::Code::PermissionDenied => {
                    Err(self.status_error("Write", status))
                }
                _ => Ok(Err(status)),
            },
        }
    }

    /// Per-update errors from the status details (one `p4.v1.Error` per
    /// update, OK for the ones that went in), with how many were refused. A
    /// status without them (a switch may leave them out of a large batch)
    /// blames the whole batch in one failure carrying the switch's message.
    fn update_failures(
        &self,
        status: &tonic::Status,
        batch: &[p4::Update],
        offset: usize,
    ) -> (usize, Vec<UpdateFailure>) {
        let details = rpc::Status::decode(status.details())
            .map(|s| s.details)
            .unwrap_or_default();
        let errors: Vec<Option<p4::Error>> = details
            .iter()
            .map(|any| {
                any.type_url
                    .ends_with("/p4.v1.Error")
                    .then(|| p4::Error::decode(any.value.as_slice()).ok())
                    .flatten()
            })
            .collect();
        if errors.len() != batch.len() || errors.iter().any(Option::is_none) {
            let update = match batch {
                [one] => self.describe_update(one),
                _ => format!(
                    "the batch of {} updates from here, no per-update errors",
                    batch.len()
                ),
            };
            let failure = UpdateFailure {
                index: offset,
                update,
                code: status.code(),
                message: status.message().to_owned(),
            };
            return (batch.len(), vec![failure]);
        }
        let failures: Vec<UpdateFailure> = errors
            .into_iter()
            .flatten()
            .zip(batch)
            .enumerate()
            .filter(|(_, (e, _))| e.canonical_code != tonic::Code::Ok as i32)
            .map(|(i, (e, u))| UpdateFailure {
                index: offset + i,
                update: self.describe_update(u),
                code: tonic::Code::from_i32(e.canonical_code),
                message: e.message,
            })
            .collect();
        (failures.len(), failures)
    }

    /// An update rendered by name, for messages.
    pub fn describe_update(&self, update: &p4::Update) -> String {
        let kind = p4::update::Type::try_from(update.r#type)
            .map_or_else(|_| format!("type {}", update.r#type), |t| format!("{t:?}"));
        let what = match (
            &self.index,
            update.entity.as_ref().and_then(|e| e.entity.as_ref()),
        ) {
            (Some(ix), Some(p4::entity::Entity::TableEntry(t))) => ix.describe_entry(t),
            (_, Some(e)) => format!("{e:?}"),
            (_, None) => "no entity".into(),
        };
        format!("{} {what}", kind.to_uppercase())
    }

    /// Reads every entity matching the filters (unset fields = wildcards).
    pub async fn read(&self, filters: Vec<p4::Entity>) -> Result<Vec<p4::Entity>, ClientError> {
        let mut grpc = self.grpc.clone();
        let request = p4::ReadRequest {
            device_id: self.config.target.device_id,
            role: self.config.role.clone(),
            entities: filters,
        };
        let timeout = self.config.rpc_timeout;
        let target = self.config.target.clone();
        let collect = async move {
            let mut stream = grpc.read(request).await?.into_inner();
            let mut out = Vec::new();
            while let Some(r) = stream.message().await? {
                out.extend(r.entities);
            }
            Ok::<_, tonic::Status>(out)
        };
        match tokio::time::timeout(timeout, collect).await {
            Err(_) => Err(ClientError::Timeout {
                target,
                what: "Read",
                timeout,
            }),
            Ok(r) => r.map_err(|s| self.status_error("Read", s)),
        }
    }

    /// Entries of one table (by name), or of every table; default-action
    /// entries are not included.
    pub async fn read_table_entries(
        &self,
        table: Option<&str>,
    ) -> Result<Vec<p4::TableEntry>, ClientError> {
        let table_id = match table {
            Some(name) => self.resolve(|ix| ix.table(name).map(|t| t.id))?,
            None => 0,
        };
        let filter = entity(p4::entity::Entity::TableEntry(p4::TableEntry {
            table_id,
            ..Default::default()
        }));
        Ok(self
            .read(vec![filter])
            .await?
            .into_iter()
            .filter_map(|e| match e.entity {
                Some(p4::entity::Entity::TableEntry(t)) if !t.is_default_action => Some(t),
                _ => None,
            })
            .collect())
    }

    /// The default-action entry of a table.
    pub async fn read_default_entry(
        &self,
        table: &str,
    ) -> Result<Option<p4::TableEntry>, ClientError> {
        let table_id = self.resolve(|ix| ix.table(table).map(|t| t.id))?;
        let filter = entity(p4::entity::Entity::TableEntry(p4::TableEntry {
            table_id,
            is_default_action: true,
            ..Default::default()
        }));
        Ok(self
            .read(vec![filter])
            .await?
            .into_iter()
            .find_map(|e| match e.entity {
                Some(p4::entity::Entity::TableEntry(t)) if t.is_default_action => Some(t),
                _ => None,
            }))
    }

    /// `(index, packets, bytes)` of an indexed counter: one cell, or all.
    pub async fn read_counter(
        &self,
        name: &str,
        index: Option<i64>,
    ) -> Result<Vec<(i64, i64, i64)>, ClientError> {
        let counter_id = self.resolve(|ix| ix.counter(name).map(|c| c.id))?;
        let filter = entity(p4::entity::Entity::CounterEntry(p4::CounterEntry {
            counter_id,
            index: index.map(|index| p4::Index { index }),
            data: None,
        }));
        let mut cells: Vec<(i64, i64, i64)> = self
            .read(vec![filter])
            .await?
            .into_iter()
            .filter_map(|e| match e.entity {
                Some(p4::entity::Entity::CounterEntry(c)) => {
                    let d = c.data.unwrap_or_default();
                    Some((c.index.map_or(0, |i| i.index), d.packet_count, d.byte_count))
                }
                _ => None,
            })
            .collect();
        cells.sort_unstable();
        Ok(cells)
    }

    pub(super) fn resolve<T>(
        &self,
        f: impl FnOnce(&P4InfoIndex) -> Result<T, P4InfoError>,
    ) -> Result<T, ClientError> {
        f(self.require_index()?).map_err(|source| ClientError::P4Info {
            target: self.config.target.clone(),
            cause: Box::new(source),
        })
    }
}

pub fn entity(e: p4::entity::Entity) -> p4::Entity {
    p4::Entity { entity: Some(e) }
}

pub fn update(kind: p4::update::Type, e: p4::entity::Entity) -> p4::Update {
    p4::Update {
        r#type: kind as i32,
        entity: Some(entity(e)),
    }
}
