//! Read RPC helpers: table entries and counters as P4Runtime entities.

use super::Service;
use crate::p4info_map;
use crate::schema;
use intpath_p4rt::p4info::P4InfoIndex;
use intpath_p4rt::proto::p4::v1 as p4;
use tonic::Status;

impl Service {
    pub(super) fn read_tables(
        &self,
        index: &P4InfoIndex,
        filter: &p4::TableEntry,
        out: &mut Vec<p4::Entity>,
    ) -> Result<(), Status> {
        let tables: Vec<&str> = if filter.table_id == 0 {
            schema::TABLES.iter().map(|t| t.name).collect()
        } else {
            let t = index
                .table_by_id(filter.table_id)
                .map_err(|e| Status::not_found(e.to_string()))?;
            vec![
                schema::table(&t.name)
                    .ok_or_else(|| Status::not_found(format!("no table {}", t.name)))?
                    .name,
            ]
        };
        let key = if filter.r#match.is_empty() {
            None
        } else {
            let named =
                p4info_map::entry_from_p4(index, filter).map_err(Status::invalid_argument)?;
            Some(named.matches)
        };
        let snapshot = self.core.tables();
        for t in tables {
            for e in snapshot.entries(t) {
                let named = e.to_named();
                if named.is_default != filter.is_default_action {
                    continue;
                }
                if key.as_ref().is_some_and(|k| *k != named.matches) {
                    continue;
                }
                let entry = p4info_map::entry_to_p4(index, &named).map_err(Status::internal)?;
                out.push(p4::Entity {
                    entity: Some(p4::entity::Entity::TableEntry(entry)),
                });
            }
        }
        Ok(())
    }

    pub(super) fn read_counters(
        &self,
        index: &P4InfoIndex,
        filter: &p4::CounterEntry,
        out: &mut Vec<p4::Entity>,
    ) -> Result<(), Status> {
        let names: Vec<String> = if filter.counter_id == 0 {
            schema::COUNTERS
                .iter()
                .map(|c| c.name.to_string())
                .collect()
        } else {
            vec![index
                .counter_by_id(filter.counter_id)
                .map_err(|e| Status::not_found(e.to_string()))?
                .name
                .clone()]
        };
        for name in names {
            let id = index
                .counter(&name)
                .map_err(|e| Status::internal(e.to_string()))?
                .id;
            let size = self.core.counters.size(&name).unwrap_or(0);
            let indices: Vec<usize> = match filter.index {
                Some(p4::Index { index }) => {
                    let i = usize::try_from(index)
                        .ok()
                        .filter(|i| *i < size)
                        .ok_or_else(|| {
                            Status::out_of_range(format!("{name}: index {index} >= size {size}"))
                        })?;
                    vec![i]
                }
                None => (0..size).collect(),
            };
            for i in indices {
                let (packets, bytes) = self.core.counters.read(&name, i).unwrap_or((0, 0));
                out.push(p4::Entity {
                    entity: Some(p4::entity::Entity::CounterEntry(p4::CounterEntry {
                        counter_id: id,
                        index: Some(p4::Index { index: i as i64 }),
                        data: Some(p4::CounterData {
                            byte_count: bytes as i64,
                            packet_count: packets as i64,
                        }),
                    })),
                });
            }
        }
        Ok(())
    }
}
