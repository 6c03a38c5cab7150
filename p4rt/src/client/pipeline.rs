//! Loading and checking the device's forwarding pipeline.

use super::{Client, ClientError};
use crate::p4info::P4InfoIndex;
use crate::proto::p4::config::v1::P4Info;
use crate::proto::p4::v1 as p4;
use std::sync::Arc;

impl Client {
    /// Pushes a pipeline (P4Info + target config, e.g. bmv2 JSON) and keeps
    /// the P4Info to name things from then on.
    pub async fn set_pipeline(
        &mut self,
        index: Arc<P4InfoIndex>,
        device_config: Vec<u8>,
        cookie: u64,
    ) -> Result<(), ClientError> {
        let mut grpc = self.grpc.clone();
        let request = p4::SetForwardingPipelineConfigRequest {
            device_id: self.config.target.device_id,
            role: self.config.role.clone(),
            election_id: self.election_id(),
            action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
            config: Some(p4::ForwardingPipelineConfig {
                p4info: Some(index.p4info().clone()),
                p4_device_config: device_config,
                cookie: Some(p4::forwarding_pipeline_config::Cookie { cookie }),
            }),
            ..Default::default()
        };
        self.unary(
            "SetForwardingPipelineConfig",
            grpc.set_forwarding_pipeline_config(request),
        )
        .await?;
        self.index = Some(index);
        Ok(())
    }

    /// The device's current P4Info and cookie (None when it has no pipeline).
    pub async fn get_pipeline(&self) -> Result<Option<(P4Info, u64)>, ClientError> {
        let mut grpc = self.grpc.clone();
        let request = p4::GetForwardingPipelineConfigRequest {
            device_id: self.config.target.device_id,
            response_type: p4::get_forwarding_pipeline_config_request::ResponseType::P4infoAndCookie
                as i32,
        };
        match self
            .unary(
                "GetForwardingPipelineConfig",
                grpc.get_forwarding_pipeline_config(request),
            )
            .await
        {
            Ok(r) => Ok(r.config.and_then(|c| {
                let cookie = c.cookie.map_or(0, |c| c.cookie);
                c.p4info.map(|i| (i, cookie))
            })),
            Err(ClientError::Rpc {
                code: tonic::Code::FailedPrecondition,
                ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Makes sure the device runs `index`'s program: pushes it when the
    /// device has none, adopts it when the device already runs the same
    /// P4Info, and fails naming the first difference otherwise (unless
    /// `replace` is set, then it pushes). Returns whether it pushed.
    pub async fn ensure_pipeline(
        &mut self,
        index: Arc<P4InfoIndex>,
        device_config: &[u8],
        cookie: u64,
        replace: bool,
    ) -> Result<bool, ClientError> {
        match self.get_pipeline().await? {
            Some((remote, _)) if remote == *index.p4info() => {
                self.index = Some(index);
                Ok(false)
            }
            Some((remote, _)) if !replace => Err(ClientError::P4InfoMismatch {
                target: self.config.target.clone(),
                difference: p4info_difference(index.p4info(), &remote),
            }),
            _ => {
                self.set_pipeline(index, device_config.to_vec(), cookie)
                    .await?;
                Ok(true)
            }
        }
    }
}

/// The first name-level difference between two P4Infos: an object one has
/// and the other lacks, or one whose id, key or parameters differ.
pub fn p4info_difference(ours: &P4Info, theirs: &P4Info) -> String {
    fn named<T>(
        items: &[T],
        preamble: impl Fn(&T) -> Option<&crate::proto::p4::config::v1::Preamble>,
    ) -> Vec<(String, u32, &T)> {
        let mut v: Vec<_> = items
            .iter()
            .map(|x| {
                let p = preamble(x);
                (
                    p.map_or_else(String::new, |p| p.name.clone()),
                    p.map_or(0, |p| p.id),
                    x,
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
    fn compare<T: PartialEq>(
        kind: &str,
        ours: Vec<(String, u32, &T)>,
        theirs: Vec<(String, u32, &T)>,
    ) -> Option<String> {
        for (name, id, x) in &ours {
            match theirs.iter().find(|(n, _, _)| n == name) {
                None => return Some(format!("{kind} {name} is missing on the device")),
                Some((_, tid, _)) if tid != id => {
                    return Some(format!(
                        "{kind} {name} has id {id:#x} here, {tid:#x} on the device"
                    ))
                }
                Some((_, _, y)) if y != x => {
                    return Some(format!(
                        "{kind} {name} is defined differently on the device"
                    ))
                }
                _ => {}
            }
        }
        theirs
            .iter()
            .find(|(n, _, _)| !ours.iter().any(|(m, _, _)| m == n))
            .map(|(n, _, _)| format!("{kind} {n} exists only on the device"))
    }
    compare(
        "table",
        named(&ours.tables, |t| t.preamble.as_ref()),
        named(&theirs.tables, |t| t.preamble.as_ref()),
    )
    .or_else(|| {
        compare(
            "action",
            named(&ours.actions, |t| t.preamble.as_ref()),
            named(&theirs.actions, |t| t.preamble.as_ref()),
        )
    })
    .or_else(|| {
        compare(
            "counter",
            named(&ours.counters, |t| t.preamble.as_ref()),
            named(&theirs.counters, |t| t.preamble.as_ref()),
        )
    })
    .or_else(|| {
        compare(
            "controller header",
            named(&ours.controller_packet_metadata, |t| t.preamble.as_ref()),
            named(&theirs.controller_packet_metadata, |t| t.preamble.as_ref()),
        )
    })
    .unwrap_or_else(|| {
        "the P4Infos differ outside tables, actions, counters and controller headers".into()
    })
}
