//! Authorization with Kafka's ACL semantics (the `StandardAuthorizer` of a KRaft broker), pure:
//! the ACL set, the matching rules, the filters of DescribeAcls / DeleteAcls and the validation
//! of CreateAcls. No I/O: the request handlers ask [`Authorizer::authorize`], the log stores
//! [`AclChange`]s.
//!
//! The rules, as Kafka applies them to one (principal, host, operation, resource):
//!
//! * a super user (`super.users`) is allowed everything;
//! * the ACLs that apply to the resource are those of its type whose pattern is the resource name
//!   (LITERAL), a prefix of it (PREFIXED) or the literal wildcard `*`;
//! * of those, an ACL matches when its principal is the caller's or `User:*`, its host is the
//!   caller's address, `*` or a CIDR range holding it, and its operation is the one asked, `ALL`,
//!   or (ALLOW only) one that implies it: READ, WRITE, DELETE and ALTER imply DESCRIBE;
//!   ALTER_CONFIGS implies DESCRIBE_CONFIGS;
//! * a matching DENY wins; else a matching ALLOW allows; else, when the resource has no ACL at
//!   all (for anyone), `allow.everyone.if.no.acl.found` decides; else the answer is no.

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::net::IpAddr;

use crate::config_keys::AuthorizerKeys;
use crate::server::peer::Principal;

/// The name of the one CLUSTER resource.
pub const CLUSTER_NAME: &str = "kafka-cluster";

/// The wildcard of resource names, principals (`User:*`) and hosts.
pub const WILDCARD: &str = "*";

/// A resource type (Kafka's `ResourceType` codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(i8)]
pub enum ResourceType {
    /// A topic.
    Topic = 2,
    /// A consumer, classic or streams group.
    Group = 3,
    /// The cluster (named `kafka-cluster`).
    Cluster = 4,
    /// A transactional id (stored and matched; no request served here checks it).
    TransactionalId = 5,
    /// A delegation token (stored only).
    DelegationToken = 6,
    /// A user (stored only).
    User = 7,
}

/// An ACL's pattern type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(i8)]
pub enum PatternType {
    /// The ACL names one resource (or all, with the name `*`).
    Literal = 3,
    /// The ACL applies to every resource whose name starts with its name.
    Prefixed = 4,
}

/// An operation (Kafka's `AclOperation` codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(i8)]
#[allow(missing_docs)]
pub enum Operation {
    All = 2,
    Read = 3,
    Write = 4,
    Create = 5,
    Delete = 6,
    Alter = 7,
    Describe = 8,
    ClusterAction = 9,
    DescribeConfigs = 10,
    AlterConfigs = 11,
    IdempotentWrite = 12,
    CreateTokens = 13,
    DescribeTokens = 14,
    TwoPhaseCommit = 15,
}

/// ALLOW or DENY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(i8)]
pub enum Permission {
    /// Refuses, whatever else allows.
    Deny = 2,
    /// Allows, unless something denies.
    Allow = 3,
}

/// Filter codes shared by every enum: `ANY` matches everything, `UNKNOWN` is what an unknown
/// code reads as.
pub const ANY: i8 = 1;
/// See [`ANY`].
pub const UNKNOWN: i8 = 0;
/// The pattern-type filter `MATCH`: every ACL that would apply to the named resource.
pub const MATCH: i8 = 2;

macro_rules! codes {
    ($t:ty { $($v:ident),* $(,)? }) => {
        impl $t {
            /// From the wire code; `None` for UNKNOWN, ANY and codes Kafka does not know.
            pub fn from_code(code: i8) -> Option<$t> {
                [$(<$t>::$v),*].into_iter().find(|v| *v as i8 == code)
            }
            /// The wire code.
            pub fn code(self) -> i8 {
                self as i8
            }
        }
    };
}
codes!(ResourceType {
    Topic,
    Group,
    Cluster,
    TransactionalId,
    DelegationToken,
    User
});
codes!(PatternType { Literal, Prefixed });
codes!(Permission { Deny, Allow });
codes!(Operation {
    All,
    Read,
    Write,
    Create,
    Delete,
    Alter,
    Describe,
    ClusterAction,
    DescribeConfigs,
    AlterConfigs,
    IdempotentWrite,
    CreateTokens,
    DescribeTokens,
    TwoPhaseCommit
});

impl ResourceType {
    /// The operations Kafka reports in `authorized_operations` for this type
    /// (`AclEntry.supportedOperations`).
    pub fn supported_operations(self) -> &'static [Operation] {
        use Operation::*;
        match self {
            ResourceType::Topic => &[
                Read,
                Write,
                Create,
                Describe,
                Delete,
                Alter,
                DescribeConfigs,
                AlterConfigs,
            ],
            ResourceType::Group => &[Read, Describe, Delete, DescribeConfigs, AlterConfigs],
            ResourceType::Cluster => &[
                Create,
                ClusterAction,
                DescribeConfigs,
                AlterConfigs,
                IdempotentWrite,
                Alter,
                Describe,
            ],
            ResourceType::TransactionalId => &[Describe, Write, TwoPhaseCommit],
            ResourceType::DelegationToken => &[Describe],
            ResourceType::User => &[CreateTokens, DescribeTokens],
        }
    }
}

/// One access control entry bound to a resource pattern (Kafka's `AclBinding`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Acl {
    /// The resource type.
    pub resource_type: ResourceType,
    /// The resource name or prefix (`*` with LITERAL: every resource of the type).
    pub resource_name: String,
    /// LITERAL or PREFIXED.
    pub pattern_type: PatternType,
    /// `Type:name`, e.g. `User:alice`; `User:*` is everyone.
    pub principal: String,
    /// An address, a CIDR range or `*`.
    pub host: String,
    /// The operation granted or refused.
    pub operation: Operation,
    /// ALLOW or DENY.
    pub permission: Permission,
}

/// A change to the ACL set, as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AclChange {
    /// Add an ACL (a no-op if it exists).
    Create(Acl),
    /// Remove an ACL.
    Delete(Acl),
}

/// A filter of DescribeAcls / DeleteAcls (Kafka's `AclBindingFilter`), with raw codes: `ANY`
/// (1) matches everything, and the pattern type may also be `MATCH` (2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclFilter {
    /// Resource type code (ANY = 1).
    pub resource_type: i8,
    /// Resource name; `None` = any.
    pub resource_name: Option<String>,
    /// Pattern type code (ANY = 1, MATCH = 2, LITERAL = 3, PREFIXED = 4).
    pub pattern_type: i8,
    /// Principal; `None` = any.
    pub principal: Option<String>,
    /// Host; `None` = any.
    pub host: Option<String>,
    /// Operation code (ANY = 1).
    pub operation: i8,
    /// Permission code (ANY = 1).
    pub permission: i8,
}

impl AclFilter {
    /// Whether a filter holds a code Kafka reads as UNKNOWN (Kafka refuses such filters).
    pub fn unknown_element(&self) -> Option<&'static str> {
        let known = |c: i8, f: fn(i8) -> bool| c == ANY || f(c);
        if !known(self.resource_type, |c| ResourceType::from_code(c).is_some()) {
            return Some("resourceType");
        }
        if !(known(self.pattern_type, |c| PatternType::from_code(c).is_some())
            || self.pattern_type == MATCH)
        {
            return Some("patternType");
        }
        if !known(self.operation, |c| Operation::from_code(c).is_some()) {
            return Some("operation");
        }
        if !known(self.permission, |c| Permission::from_code(c).is_some()) {
            return Some("permissionType");
        }
        None
    }

    /// Kafka's `AclBindingFilter.matches`.
    pub fn matches(&self, acl: &Acl) -> bool {
        if self.resource_type != ANY && self.resource_type != acl.resource_type.code() {
            return false;
        }
        let pt = self.pattern_type;
        if pt != ANY && pt != MATCH && pt != acl.pattern_type.code() {
            return false;
        }
        if let Some(name) = &self.resource_name {
            let ok = if pt == ANY || pt == acl.pattern_type.code() {
                *name == acl.resource_name
            } else {
                match acl.pattern_type {
                    PatternType::Literal => {
                        *name == acl.resource_name || acl.resource_name == WILDCARD
                    }
                    PatternType::Prefixed => name.starts_with(&acl.resource_name),
                }
            };
            if !ok {
                return false;
            }
        }
        self.principal.as_ref().is_none_or(|p| *p == acl.principal)
            && self.host.as_ref().is_none_or(|h| *h == acl.host)
            && (self.operation == ANY || self.operation == acl.operation.code())
            && (self.permission == ANY || self.permission == acl.permission.code())
    }
}

/// Why CreateAcls refuses an ACL: Kafka's INVALID_REQUEST messages.
pub fn validate_new(
    resource_type: i8,
    resource_name: &str,
    pattern_type: i8,
    principal: &str,
    host: &str,
    operation: i8,
    permission: i8,
) -> Result<Acl, String> {
    let resource = ResourceType::from_code(resource_type);
    // The broker's own checks (AclApis) come before the controller's (AclControlManager).
    if resource == Some(ResourceType::Cluster) && resource_name != CLUSTER_NAME {
        return Err("The only valid name for the CLUSTER resource is kafka-cluster".into());
    }
    if resource_name.is_empty() {
        return Err("Invalid empty resource name".into());
    }
    let Some(resource_type) = resource else {
        return Err(format!("Invalid resourceType {}", code_name(resource_type)));
    };
    let Some(pattern_type) = PatternType::from_code(pattern_type) else {
        return Err(format!(
            "Invalid patternType {}",
            pattern_name(pattern_type)
        ));
    };
    let Some(operation) = Operation::from_code(operation) else {
        return Err(format!("Invalid operation {}", code_name(operation)));
    };
    let Some(permission) = Permission::from_code(permission) else {
        return Err(format!("Invalid permissionType {}", code_name(permission)));
    };
    if !principal.contains(':') {
        return Err(format!(
            "Could not parse principal from `{principal}` (no colon is present separating the \
             principal type from the principal name)"
        ));
    }
    if host.is_empty() {
        return Err("Host pattern cannot be null or empty".into());
    }
    if host != WILDCARD && host.contains('/') && parse_cidr(host).is_none() {
        return Err(format!(
            "Invalid CIDR notation '{host}': not an address/prefix-length pair"
        ));
    }
    Ok(Acl {
        resource_type,
        resource_name: resource_name.to_string(),
        pattern_type,
        principal: principal.to_string(),
        host: host.to_string(),
        operation,
        permission,
    })
}

fn code_name(code: i8) -> &'static str {
    if code == ANY { "ANY" } else { "UNKNOWN" }
}

fn pattern_name(code: i8) -> &'static str {
    match code {
        ANY => "ANY",
        MATCH => "MATCH",
        _ => "UNKNOWN",
    }
}

/// `a.b.c.d/n` or `x::y/n` -> (network, prefix length).
fn parse_cidr(s: &str) -> Option<(IpAddr, u32)> {
    let (addr, bits) = s.split_once('/')?;
    let addr: IpAddr = addr.parse().ok()?;
    let bits: u32 = bits.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((addr, bits))
}

fn in_cidr(host: &str, cidr: &str) -> bool {
    let (Some((net, bits)), Ok(ip)) = (parse_cidr(cidr), host.parse::<IpAddr>()) else {
        return false;
    };
    let prefix = |a: u128, width: u32| {
        if bits == 0 { 0 } else { a >> (width - bits) }
    };
    match (net, ip) {
        (IpAddr::V4(n), IpAddr::V4(i)) => {
            prefix(u32::from(n) as u128, 32) == prefix(u32::from(i) as u128, 32)
        }
        (IpAddr::V6(n), IpAddr::V6(i)) => prefix(u128::from(n), 128) == prefix(u128::from(i), 128),
        _ => false,
    }
}

/// The ACLs and the authorizer settings; `enabled == false` allows everything (no authorizer
/// configured).
#[derive(Debug, Clone, Default)]
pub struct Authorizer {
    /// `authorizer.class.name` names Kafka's StandardAuthorizer (or AclAuthorizer).
    pub enabled: bool,
    super_users: BTreeSet<String>,
    allow_if_no_acl: bool,
    acls: BTreeSet<Acl>,
}

impl Authorizer {
    /// An authorizer as the broker keys configure it, with no ACLs yet.
    pub fn new(keys: &AuthorizerKeys) -> Authorizer {
        Authorizer {
            enabled: keys.enabled(),
            super_users: keys.super_users.iter().cloned().collect(),
            allow_if_no_acl: keys.allow_everyone_if_no_acl_found,
            acls: BTreeSet::new(),
        }
    }

    /// Every ACL, in a stable order.
    pub fn acls(&self) -> impl Iterator<Item = &Acl> {
        self.acls.iter()
    }

    /// Number of ACLs.
    pub fn len(&self) -> usize {
        self.acls.len()
    }

    /// No ACLs.
    pub fn is_empty(&self) -> bool {
        self.acls.is_empty()
    }

    /// Whether an ACL exists.
    pub fn contains(&self, acl: &Acl) -> bool {
        self.acls.contains(acl)
    }

    /// Apply a new or replayed change.
    pub fn apply(&mut self, change: &AclChange) {
        match change {
            AclChange::Create(a) => {
                self.acls.insert(a.clone());
            }
            AclChange::Delete(a) => {
                self.acls.remove(a);
            }
        }
    }

    /// May `principal` at `host` perform `op` on the resource?
    pub fn authorize(
        &self,
        principal: &Principal,
        host: &str,
        op: Operation,
        resource_type: ResourceType,
        name: &str,
    ) -> bool {
        if !self.enabled || self.is_super_user(principal) {
            return true;
        }
        let who = principal.to_string();
        let mut applies = false;
        let mut allowed = false;
        for acl in self.acls_for(resource_type, name) {
            applies = true;
            match matching(acl, &who, host, op) {
                Some(Permission::Deny) => return false,
                Some(Permission::Allow) => allowed = true,
                None => {}
            }
        }
        allowed || (!applies && self.allow_if_no_acl)
    }

    fn is_super_user(&self, principal: &Principal) -> bool {
        !self.super_users.is_empty() && self.super_users.contains(&principal.to_string())
    }

    /// The ACLs whose pattern covers the resource.
    fn acls_for<'a>(
        &'a self,
        resource_type: ResourceType,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Acl> + 'a {
        self.acls.iter().filter(move |a| {
            a.resource_type == resource_type
                && match a.pattern_type {
                    PatternType::Literal => a.resource_name == name || a.resource_name == WILDCARD,
                    PatternType::Prefixed => name.starts_with(a.resource_name.as_str()),
                }
        })
    }

    /// Kafka's `authorized_operations` bit field: bit `op` set for every operation of the
    /// type's supported set that is allowed.
    pub fn authorized_operations(
        &self,
        principal: &Principal,
        host: &str,
        resource_type: ResourceType,
        name: &str,
    ) -> i32 {
        resource_type
            .supported_operations()
            .iter()
            .filter(|op| self.authorize(principal, host, **op, resource_type, name))
            .fold(0i32, |bits, op| bits | (1 << op.code()))
    }
}

/// What one ACL says about (principal, host, op), if it matches (Kafka's `findResult`).
fn matching(acl: &Acl, principal: &str, host: &str, op: Operation) -> Option<Permission> {
    if acl.principal != principal && acl.principal != "User:*" {
        return None;
    }
    if acl.host != WILDCARD && acl.host != host && !in_cidr(host, &acl.host) {
        return None;
    }
    let implied = match op {
        Operation::Describe => matches!(
            acl.operation,
            Operation::Describe
                | Operation::Read
                | Operation::Write
                | Operation::Delete
                | Operation::Alter
        ),
        Operation::DescribeConfigs => matches!(
            acl.operation,
            Operation::DescribeConfigs | Operation::AlterConfigs
        ),
        _ => acl.operation == op,
    };
    let ok = acl.operation == Operation::All
        || match acl.permission {
            Permission::Allow => implied,
            Permission::Deny => acl.operation == op,
        };
    ok.then_some(acl.permission)
}
