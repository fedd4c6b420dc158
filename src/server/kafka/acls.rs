//! CreateAcls (30), DescribeAcls (29) and DeleteAcls (31), as a KRaft broker answers them:
//! ALTER on the cluster to change ACLs, DESCRIBE to read them, SECURITY_DISABLED without an
//! authorizer, Kafka's validation messages per ACL. Changes are logged as [`LogEntry::Acls`].

use std::collections::BTreeMap;

use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::error::ErrorCode;
use crate::server::acl::{self, Acl, AclChange, AclFilter, Operation};
use crate::server::peer::Peer;
use crate::server::storage::log::LogEntry;

use super::State;

/// At most this many ACLs exist at once, and one request creates or deletes at most this many
/// (Kafka's controller refuses operations of more than 10,000 records).
pub const MAX_ACLS: usize = 10_000;

/// The longest resource name, principal or host stored (the log's int16 string length).
const MAX_FIELD: usize = i16::MAX as usize;

fn s(v: impl Into<String>) -> StrBytes {
    StrBytes::from_string(v.into())
}

const NO_AUTHORIZER: &str = "No Authorizer is configured.";

fn cluster_denied(api: &str, op: &str) -> String {
    format!("Request {api} needs {op} permission.")
}

impl State {
    pub(super) fn create_acls(
        &mut self,
        peer: &Peer,
        r: &CreateAclsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> CreateAclsResponse {
        let mut resp = CreateAclsResponse::default();
        let refuse = |code: ErrorCode, msg: &str| {
            r.creations
                .iter()
                .map(|_| {
                    let mut res = AclCreationResult::default();
                    res.error_code = code.0;
                    res.error_message = Some(s(msg));
                    res
                })
                .collect()
        };
        if !self.cluster_allowed(peer, Operation::Alter) {
            resp.results = refuse(
                ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
                &cluster_denied("CreateAcls", "ALTER"),
            );
            return resp;
        }
        if !self.authorizer.enabled {
            resp.results = refuse(ErrorCode::SECURITY_DISABLED, NO_AUTHORIZER);
            return resp;
        }
        let mut changes = Vec::new();
        for c in &r.creations {
            let mut res = AclCreationResult::default();
            let fields = [&c.resource_name, &c.principal, &c.host];
            let checked = if fields.iter().any(|f| f.len() > MAX_FIELD) {
                Err(format!(
                    "ACL fields are limited to {MAX_FIELD} bytes (resource name, principal, host)"
                ))
            } else {
                acl::validate_new(
                    c.resource_type,
                    &c.resource_name,
                    c.resource_pattern_type,
                    &c.principal,
                    &c.host,
                    c.operation,
                    c.permission_type,
                )
            };
            match checked {
                Err(msg) => {
                    res.error_code = ErrorCode::INVALID_REQUEST.0;
                    res.error_message = Some(s(msg));
                }
                Ok(a) => {
                    let new = !self.authorizer.contains(&a)
                        && !changes
                            .iter()
                            .any(|x| matches!(x, AclChange::Create(b) if *b == a));
                    if new && self.authorizer.len() + changes.len() >= MAX_ACLS {
                        res.error_code = ErrorCode::INVALID_REQUEST.0;
                        res.error_message = Some(s(format!(
                            "Cannot create more than {MAX_ACLS} ACLs (groupcoord's bound)."
                        )));
                    } else if new {
                        changes.push(AclChange::Create(a));
                    }
                }
            }
            resp.results.push(res);
        }
        self.change_acls(changes, entries);
        resp
    }

    pub(super) fn describe_acls(
        &self,
        peer: &Peer,
        r: &DescribeAclsRequest,
    ) -> DescribeAclsResponse {
        let mut resp = DescribeAclsResponse::default();
        if !self.cluster_allowed(peer, Operation::Describe) {
            resp.error_code = ErrorCode::CLUSTER_AUTHORIZATION_FAILED.0;
            resp.error_message = Some(s(cluster_denied("DescribeAcls", "DESCRIBE")));
            return resp;
        }
        if !self.authorizer.enabled {
            resp.error_code = ErrorCode::SECURITY_DISABLED.0;
            resp.error_message = Some(s("No Authorizer is configured on the broker"));
            return resp;
        }
        let filter = AclFilter {
            resource_type: r.resource_type_filter,
            resource_name: r.resource_name_filter.as_ref().map(|x| x.to_string()),
            pattern_type: r.pattern_type_filter,
            principal: r.principal_filter.as_ref().map(|x| x.to_string()),
            host: r.host_filter.as_ref().map(|x| x.to_string()),
            operation: r.operation,
            permission: r.permission_type,
        };
        if let Some(what) = filter.unknown_element() {
            resp.error_code = ErrorCode::INVALID_REQUEST.0;
            resp.error_message = Some(s(format!(
                "DescribeAclsRequest contains UNKNOWN elements ({what})"
            )));
            return resp;
        }
        // Grouped by resource pattern, as Kafka's `aclsResources` does.
        let mut by_pattern: BTreeMap<(i8, String, i8), Vec<AclDescription>> = BTreeMap::new();
        for a in self.authorizer.acls().filter(|a| filter.matches(a)) {
            let mut d = AclDescription::default();
            d.principal = s(a.principal.clone());
            d.host = s(a.host.clone());
            d.operation = a.operation.code();
            d.permission_type = a.permission.code();
            by_pattern
                .entry((
                    a.resource_type.code(),
                    a.resource_name.clone(),
                    a.pattern_type.code(),
                ))
                .or_default()
                .push(d);
        }
        resp.resources = by_pattern
            .into_iter()
            .map(|((rt, name, pt), acls)| {
                let mut res = DescribeAclsResource::default();
                res.resource_type = rt;
                res.resource_name = s(name);
                res.pattern_type = pt;
                res.acls = acls;
                res
            })
            .collect();
        resp
    }

    pub(super) fn delete_acls(
        &mut self,
        peer: &Peer,
        r: &DeleteAclsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> DeleteAclsResponse {
        let mut resp = DeleteAclsResponse::default();
        let refuse = |code: ErrorCode, msg: &str| {
            r.filters
                .iter()
                .map(|_| {
                    let mut res = DeleteAclsFilterResult::default();
                    res.error_code = code.0;
                    res.error_message = Some(s(msg));
                    res
                })
                .collect()
        };
        if !self.cluster_allowed(peer, Operation::Alter) {
            resp.filter_results = refuse(
                ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
                &cluster_denied("DeleteAcls", "ALTER"),
            );
            return resp;
        }
        if !self.authorizer.enabled {
            resp.filter_results = refuse(ErrorCode::SECURITY_DISABLED, NO_AUTHORIZER);
            return resp;
        }
        let mut deleted: Vec<Acl> = Vec::new();
        for f in &r.filters {
            let filter = AclFilter {
                resource_type: f.resource_type_filter,
                resource_name: f.resource_name_filter.as_ref().map(|x| x.to_string()),
                pattern_type: f.pattern_type_filter,
                principal: f.principal_filter.as_ref().map(|x| x.to_string()),
                host: f.host_filter.as_ref().map(|x| x.to_string()),
                operation: f.operation,
                permission: f.permission_type,
            };
            let mut res = DeleteAclsFilterResult::default();
            if let Some(what) = filter.unknown_element() {
                res.error_code = ErrorCode::INVALID_REQUEST.0;
                res.error_message = Some(s(if what == "patternType" {
                    "Unknown patternFilter."
                } else {
                    "Unknown entryFilter."
                }));
                resp.filter_results.push(res);
                continue;
            }
            for a in self.authorizer.acls().filter(|a| filter.matches(a)) {
                let mut m = DeleteAclsMatchingAcl::default();
                m.resource_type = a.resource_type.code();
                m.resource_name = s(a.resource_name.clone());
                m.pattern_type = a.pattern_type.code();
                m.principal = s(a.principal.clone());
                m.host = s(a.host.clone());
                m.operation = a.operation.code();
                m.permission_type = a.permission.code();
                res.matching_acls.push(m);
                if !deleted.contains(a) {
                    deleted.push(a.clone());
                }
            }
            resp.filter_results.push(res);
        }
        self.change_acls(
            deleted.into_iter().map(AclChange::Delete).collect(),
            entries,
        );
        resp
    }

    fn change_acls(&mut self, changes: Vec<AclChange>, entries: &mut Vec<LogEntry>) {
        if changes.is_empty() {
            return;
        }
        changes.iter().for_each(|c| self.authorizer.apply(c));
        entries.push(LogEntry::Acls(changes));
    }
}
