//! The matching rules of Kafka's StandardAuthorizer, one at a time.

use super::*;
use crate::config_keys::AuthorizerKeys;

fn on(super_users: &[&str], allow_if_no_acl: bool) -> Authorizer {
    Authorizer::new(&AuthorizerKeys {
        class_name: crate::config_keys::AUTHORIZER_CLASSES[0].into(),
        super_users: super_users.iter().map(|s| s.to_string()).collect(),
        allow_everyone_if_no_acl_found: allow_if_no_acl,
    })
}

fn acl(
    rt: ResourceType,
    name: &str,
    pt: PatternType,
    principal: &str,
    host: &str,
    op: Operation,
    perm: Permission,
) -> Acl {
    Acl {
        resource_type: rt,
        resource_name: name.into(),
        pattern_type: pt,
        principal: principal.into(),
        host: host.into(),
        operation: op,
        permission: perm,
    }
}

fn allow(rt: ResourceType, name: &str, pt: PatternType, who: &str, op: Operation) -> Acl {
    acl(rt, name, pt, who, "*", op, Permission::Allow)
}

fn deny(rt: ResourceType, name: &str, pt: PatternType, who: &str, op: Operation) -> Acl {
    acl(rt, name, pt, who, "*", op, Permission::Deny)
}

fn with(mut a: Authorizer, acls: &[Acl]) -> Authorizer {
    for x in acls {
        a.apply(&AclChange::Create(x.clone()));
    }
    a
}

const G: ResourceType = ResourceType::Group;
const T: ResourceType = ResourceType::Topic;
const L: PatternType = PatternType::Literal;
const P: PatternType = PatternType::Prefixed;

fn alice() -> Principal {
    Principal::user("alice")
}

fn may(a: &Authorizer, who: &Principal, op: Operation, rt: ResourceType, name: &str) -> bool {
    a.authorize(who, "10.0.0.1", op, rt, name)
}

#[test]
fn off_allows_everything() {
    let a = Authorizer::default();
    assert!(may(&a, &alice(), Operation::Delete, G, "g"));
}

#[test]
fn no_acl_denies_unless_allow_everyone() {
    assert!(!may(&on(&[], false), &alice(), Operation::Read, G, "g"));
    assert!(may(&on(&[], true), &alice(), Operation::Read, G, "g"));
    // An ACL on the resource for someone else: the resource has ACLs, so the default does not
    // apply even with allow.everyone.if.no.acl.found.
    let a = with(
        on(&[], true),
        &[allow(G, "g", L, "User:bob", Operation::Read)],
    );
    assert!(!may(&a, &alice(), Operation::Read, G, "g"));
    assert!(may(&a, &alice(), Operation::Read, G, "other"));
}

#[test]
fn super_users_are_allowed_everything() {
    let a = with(
        on(&["User:admin", "User:bob"], false),
        &[deny(G, "*", L, "User:*", Operation::All)],
    );
    assert!(may(
        &a,
        &Principal::user("admin"),
        Operation::Delete,
        G,
        "g"
    ));
    assert!(may(&a, &Principal::user("bob"), Operation::Read, T, "t"));
    assert!(!may(&a, &alice(), Operation::Read, G, "g"));
}

#[test]
fn literal_prefixed_and_wildcard_patterns() {
    let a = with(
        on(&[], false),
        &[
            allow(G, "app", L, "User:alice", Operation::Read),
            allow(T, "app-", P, "User:alice", Operation::Write),
            allow(T, "*", L, "User:alice", Operation::Describe),
        ],
    );
    assert!(may(&a, &alice(), Operation::Read, G, "app"));
    assert!(
        !may(&a, &alice(), Operation::Read, G, "app2"),
        "literal is exact"
    );
    assert!(may(&a, &alice(), Operation::Write, T, "app-input"));
    assert!(!may(&a, &alice(), Operation::Write, T, "other"));
    assert!(may(&a, &alice(), Operation::Describe, T, "anything"));
    // A resource type does not leak into another.
    assert!(!may(&a, &alice(), Operation::Read, T, "app"));
}

#[test]
fn deny_wins_over_allow() {
    let a = with(
        on(&[], false),
        &[
            allow(T, "*", L, "User:*", Operation::All),
            deny(T, "secret", P, "User:alice", Operation::Read),
        ],
    );
    assert!(may(&a, &alice(), Operation::Read, T, "public"));
    assert!(!may(&a, &alice(), Operation::Read, T, "secret-1"));
    assert!(may(
        &a,
        &Principal::user("bob"),
        Operation::Read,
        T,
        "secret-1"
    ));
    // A DENY of ALL refuses every operation.
    let a = with(a, &[deny(T, "x", L, "User:alice", Operation::All)]);
    assert!(!may(&a, &alice(), Operation::Describe, T, "x"));
}

#[test]
fn implied_operations_are_for_allow_only() {
    let a = with(
        on(&[], false),
        &[
            allow(G, "g", L, "User:alice", Operation::Read),
            allow(T, "t", L, "User:alice", Operation::AlterConfigs),
        ],
    );
    assert!(
        may(&a, &alice(), Operation::Describe, G, "g"),
        "READ implies DESCRIBE"
    );
    assert!(!may(&a, &alice(), Operation::Delete, G, "g"));
    assert!(may(&a, &alice(), Operation::DescribeConfigs, T, "t"));
    assert!(!may(&a, &alice(), Operation::Describe, T, "t"));
    for op in [Operation::Write, Operation::Delete, Operation::Alter] {
        let a = with(on(&[], false), &[allow(T, "t", L, "User:alice", op)]);
        assert!(may(&a, &alice(), Operation::Describe, T, "t"), "{op:?}");
    }
    // DENY READ does not deny DESCRIBE.
    let a = with(
        on(&[], false),
        &[
            allow(G, "g", L, "User:alice", Operation::Describe),
            deny(G, "g", L, "User:alice", Operation::Read),
        ],
    );
    assert!(may(&a, &alice(), Operation::Describe, G, "g"));
    assert!(!may(&a, &alice(), Operation::Read, G, "g"));
}

#[test]
fn hosts_match_exactly_by_wildcard_or_cidr() {
    let only = |host: &str| {
        with(
            on(&[], false),
            &[acl(
                G,
                "g",
                L,
                "User:alice",
                host,
                Operation::Read,
                Permission::Allow,
            )],
        )
    };
    let read_from =
        |a: &Authorizer, host: &str| a.authorize(&alice(), host, Operation::Read, G, "g");
    assert!(read_from(&only("10.0.0.1"), "10.0.0.1"));
    assert!(!read_from(&only("10.0.0.1"), "10.0.0.2"));
    assert!(read_from(&only("10.0.0.0/24"), "10.0.0.77"));
    assert!(!read_from(&only("10.0.0.0/24"), "10.0.1.1"));
    assert!(read_from(&only("::1/128"), "::1"));
    assert!(read_from(&only("0.0.0.0/0"), "192.168.1.1"));
}

#[test]
fn authorized_operations_bits() {
    let a = with(
        on(&[], false),
        &[allow(G, "g", L, "User:alice", Operation::Read)],
    );
    // READ (3) and the implied DESCRIBE (8).
    assert_eq!(
        a.authorized_operations(&alice(), "h", G, "g"),
        (1 << 3) | (1 << 8)
    );
    assert_eq!(a.authorized_operations(&alice(), "h", G, "other"), 0);
    // Off: every supported group operation, Kafka's 3400.
    assert_eq!(
        Authorizer::default().authorized_operations(&alice(), "h", G, "g"),
        3400
    );
}

#[test]
fn filters_match_as_kafka_does() {
    let lit = allow(T, "orders", L, "User:alice", Operation::Read);
    let pre = allow(T, "ord", P, "User:alice", Operation::Read);
    let star = allow(T, "*", L, "User:bob", Operation::Write);
    let f = |rt, name: Option<&str>, pt| AclFilter {
        resource_type: rt,
        resource_name: name.map(str::to_string),
        pattern_type: pt,
        principal: None,
        host: None,
        operation: ANY,
        permission: ANY,
    };
    // ANY: exact name of any pattern type.
    let any = f(ANY, Some("orders"), ANY);
    assert!(any.matches(&lit) && !any.matches(&pre) && !any.matches(&star));
    // MATCH: everything that applies to the resource "orders".
    let m = f(T.code(), Some("orders"), MATCH);
    assert!(m.matches(&lit) && m.matches(&pre) && m.matches(&star));
    // A given pattern type: that type, exact name.
    let p = f(T.code(), Some("ord"), P.code());
    assert!(p.matches(&pre) && !p.matches(&lit));
    // Entry filters.
    let mut by_principal = f(ANY, None, ANY);
    by_principal.principal = Some("User:bob".into());
    assert!(by_principal.matches(&star) && !by_principal.matches(&lit));
    let mut by_op = f(ANY, None, ANY);
    by_op.operation = Operation::Write.code();
    assert!(by_op.matches(&star) && !by_op.matches(&lit));
    assert_eq!(f(0, None, ANY).unknown_element(), Some("resourceType"));
    assert_eq!(f(ANY, None, 9).unknown_element(), Some("patternType"));
    assert_eq!(f(ANY, None, MATCH).unknown_element(), None);
}

#[test]
fn new_acls_are_validated_with_kafkas_messages() {
    let v = |rt: i8, name: &str, pt: i8, principal: &str, host: &str, op: i8, perm: i8| {
        validate_new(rt, name, pt, principal, host, op, perm)
    };
    let ok = v(3, "g", 3, "User:alice", "*", 3, 3).unwrap();
    assert_eq!(ok.resource_type, G);
    let e = |r: Result<Acl, String>| r.unwrap_err();
    assert_eq!(
        e(v(4, "x", 3, "User:a", "*", 3, 3)),
        "The only valid name for the CLUSTER resource is kafka-cluster"
    );
    assert_eq!(
        e(v(3, "", 3, "User:a", "*", 3, 3)),
        "Invalid empty resource name"
    );
    assert_eq!(
        e(v(1, "g", 3, "User:a", "*", 3, 3)),
        "Invalid resourceType ANY"
    );
    assert_eq!(
        e(v(3, "g", 2, "User:a", "*", 3, 3)),
        "Invalid patternType MATCH"
    );
    assert_eq!(
        e(v(3, "g", 3, "User:a", "*", 1, 3)),
        "Invalid operation ANY"
    );
    assert_eq!(
        e(v(3, "g", 3, "User:a", "*", 3, 0)),
        "Invalid permissionType UNKNOWN"
    );
    assert!(e(v(3, "g", 3, "alice", "*", 3, 3)).starts_with("Could not parse principal"));
    assert_eq!(
        e(v(3, "g", 3, "User:a", "", 3, 3)),
        "Host pattern cannot be null or empty"
    );
    assert!(e(v(3, "g", 3, "User:a", "10.0.0.0/99", 3, 3)).starts_with("Invalid CIDR"));
    assert!(
        v(5, "txn", 4, "User:a", "*", 4, 3).is_ok(),
        "TRANSACTIONAL_ID is stored"
    );
}
