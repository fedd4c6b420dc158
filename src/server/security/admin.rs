//! DescribeUserScramCredentials (50) and AlterUserScramCredentials (51) as Kafka 4.4 answers
//! them (`ScramImage.describe`, `ScramControlManager.alterCredentials`): per-user results with
//! Kafka's error codes and messages. Pure: the caller logs the changes and applies them.

use std::collections::{BTreeMap, HashMap};

use kafka_protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use kafka_protocol::messages::describe_user_scram_credentials_response::{
    CredentialInfo, DescribeUserScramCredentialsResult,
};
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::codes as ErrorCode;
use super::scram::{
    MAX_FIELD, MAX_ITERATIONS, MIN_ITERATIONS, ScramCredential, ScramCredentials, ScramHash,
};
use crate::error::ErrorCode as Code;
use crate::server::storage::log::ScramChange;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// DescribeUserScramCredentials: every user when `users` is null or empty.
pub fn describe(
    creds: &ScramCredentials,
    r: &DescribeUserScramCredentialsRequest,
) -> DescribeUserScramCredentialsResponse {
    // user -> named more than once
    let mut users: BTreeMap<String, bool> = BTreeMap::new();
    match r.users.as_deref() {
        None | Some([]) => {
            for (u, _, _) in creds.iter() {
                users.insert(u.to_string(), false);
            }
        }
        Some(list) => {
            for u in list {
                let name = u.name.to_string();
                match users.get_mut(&name) {
                    Some(twice) => *twice = true,
                    None => {
                        users.insert(name, false);
                    }
                }
            }
        }
    }
    let mut resp = DescribeUserScramCredentialsResponse::default();
    resp.error_message = None;
    for (user, duplicate) in users {
        let mut res = DescribeUserScramCredentialsResult::default();
        res.user = s(&user);
        res.error_message = None;
        if duplicate {
            res.error_code = ErrorCode::DUPLICATE_RESOURCE.0;
            res.error_message = Some(s(&format!(
                "Cannot describe SCRAM credentials for the same user twice in a single request: {user}"
            )));
        } else {
            let infos: Vec<CredentialInfo> = [ScramHash::Sha256, ScramHash::Sha512]
                .into_iter()
                .filter_map(|h| {
                    creds.get(&user, h).map(|c| {
                        let mut i = CredentialInfo::default();
                        i.mechanism = h.type_id();
                        i.iterations = c.iterations;
                        i
                    })
                })
                .collect();
            if infos.is_empty() {
                res.error_code = ErrorCode::RESOURCE_NOT_FOUND.0;
                res.error_message = Some(s(&format!(
                    "Attempt to describe a user credential that does not exist: {user}"
                )));
            } else {
                res.credential_infos = infos;
            }
        }
        resp.results.push(res);
    }
    resp
}

/// AlterUserScramCredentials: the response and the changes to log (all-or-nothing per user).
pub fn alter(
    creds: &ScramCredentials,
    r: &AlterUserScramCredentialsRequest,
) -> (AlterUserScramCredentialsResponse, Vec<ScramChange>) {
    let mut errors: BTreeMap<String, (Code, &'static str)> = BTreeMap::new();
    let mut deletions: HashMap<String, ScramHash> = HashMap::new();
    let mut upserts: HashMap<String, ScramChange> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    const TWICE: &str = "A user credential cannot be altered twice in the same request";
    for d in &r.deletions {
        let name = d.name.to_string();
        if errors.contains_key(&name) {
            continue;
        }
        if deletions.remove(&name).is_some() {
            errors.insert(name, (ErrorCode::DUPLICATE_RESOURCE, TWICE));
            continue;
        }
        let check = validate_name(&name).and_then(|_| {
            let h = ScramHash::from_type_id(d.mechanism).ok_or((
                ErrorCode::UNSUPPORTED_SASL_MECHANISM,
                "Unknown SCRAM mechanism",
            ))?;
            if creds.get(&name, h).is_none() {
                return Err((
                    ErrorCode::RESOURCE_NOT_FOUND,
                    "Attempt to delete a user credential that does not exist",
                ));
            }
            Ok(h)
        });
        match check {
            Ok(h) => {
                order.push(name.clone());
                deletions.insert(name, h);
            }
            Err(e) => {
                errors.insert(name, e);
            }
        }
    }
    for u in &r.upsertions {
        let name = u.name.to_string();
        if errors.contains_key(&name) {
            continue;
        }
        if deletions.remove(&name).is_some() || upserts.remove(&name).is_some() {
            errors.insert(name, (ErrorCode::DUPLICATE_RESOURCE, TWICE));
            continue;
        }
        let check = validate_name(&name).and_then(|_| {
            let h = ScramHash::from_type_id(u.mechanism).ok_or((
                ErrorCode::UNSUPPORTED_SASL_MECHANISM,
                "Unknown SCRAM mechanism",
            ))?;
            if u.iterations < MIN_ITERATIONS {
                return Err((ErrorCode::UNACCEPTABLE_CREDENTIAL, "Too few iterations"));
            }
            if u.iterations > MAX_ITERATIONS {
                return Err((ErrorCode::UNACCEPTABLE_CREDENTIAL, "Too many iterations"));
            }
            if u.salt.len() > MAX_FIELD || u.salted_password.len() > MAX_FIELD {
                return Err((
                    ErrorCode::UNACCEPTABLE_CREDENTIAL,
                    "Salt or salted password too long",
                ));
            }
            Ok(h)
        });
        match check {
            Ok(h) => {
                order.push(name.clone());
                let credential =
                    ScramCredential::from_salted(h, &u.salt, &u.salted_password, u.iterations);
                upserts.insert(
                    name.clone(),
                    ScramChange::Upsert {
                        user: name,
                        hash: h,
                        credential,
                    },
                );
            }
            Err(e) => {
                errors.insert(name, e);
            }
        }
    }
    let mut resp = AlterUserScramCredentialsResponse::default();
    let mut changes = Vec::new();
    let mut done = std::collections::HashSet::new();
    for name in order {
        if errors.contains_key(&name) || !done.insert(name.clone()) {
            continue;
        }
        if let Some(h) = deletions.get(&name) {
            changes.push(ScramChange::Delete {
                user: name.clone(),
                hash: *h,
            });
        } else if let Some(c) = upserts.get(&name) {
            changes.push(c.clone());
        } else {
            continue;
        }
        let mut res = AlterUserScramCredentialsResult::default();
        res.user = s(&name);
        res.error_message = None;
        resp.results.push(res);
    }
    for (name, (code, message)) in errors {
        let mut res = AlterUserScramCredentialsResult::default();
        res.user = s(&name);
        res.error_code = code.0;
        res.error_message = Some(s(message));
        resp.results.push(res);
    }
    (resp, changes)
}

fn validate_name(name: &str) -> Result<(), (Code, &'static str)> {
    if name.is_empty() {
        return Err((
            ErrorCode::UNACCEPTABLE_CREDENTIAL,
            "Username must not be empty",
        ));
    }
    if name.len() > MAX_FIELD {
        return Err((ErrorCode::UNACCEPTABLE_CREDENTIAL, "Username too long"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::alter_user_scram_credentials_request::{
        ScramCredentialDeletion, ScramCredentialUpsertion,
    };
    use kafka_protocol::messages::describe_user_scram_credentials_request::UserName;

    fn upsert(name: &str, mech: i8, iterations: i32) -> ScramCredentialUpsertion {
        let mut u = ScramCredentialUpsertion::default();
        u.name = s(name);
        u.mechanism = mech;
        u.iterations = iterations;
        u.salt = bytes::Bytes::from_static(b"salt");
        u.salted_password = bytes::Bytes::from_static(&[7; 64]);
        u
    }

    #[test]
    fn alter_then_describe() {
        let mut creds = ScramCredentials::default();
        let mut r = AlterUserScramCredentialsRequest::default();
        r.upsertions = vec![
            upsert("alice", 2, 8192),
            upsert("bob", 1, 100),
            upsert("carol", 3, 4096),
            upsert("", 1, 4096),
            upsert("dave", 1, 99999),
        ];
        let mut d = ScramCredentialDeletion::default();
        d.name = s("erin");
        d.mechanism = 1;
        r.deletions = vec![d];
        let (resp, changes) = alter(&creds, &r);
        let by: BTreeMap<String, (i16, Option<String>)> = resp
            .results
            .iter()
            .map(|x| {
                (
                    x.user.to_string(),
                    (
                        x.error_code,
                        x.error_message.as_ref().map(|m| m.to_string()),
                    ),
                )
            })
            .collect();
        assert_eq!(by["alice"], (0, None));
        assert_eq!(by["bob"].1.as_deref(), Some("Too few iterations"));
        assert_eq!(by["carol"].0, ErrorCode::UNSUPPORTED_SASL_MECHANISM.0);
        assert_eq!(by[""].1.as_deref(), Some("Username must not be empty"));
        assert_eq!(by["dave"].1.as_deref(), Some("Too many iterations"));
        assert_eq!(by["erin"].0, ErrorCode::RESOURCE_NOT_FOUND.0);
        assert_eq!(changes.len(), 1);
        changes.iter().for_each(|c| c.apply(&mut creds));

        let mut q = DescribeUserScramCredentialsRequest::default();
        let d = describe(&creds, &q);
        assert_eq!(d.results.len(), 1);
        assert_eq!(d.results[0].credential_infos[0].iterations, 8192);
        assert_eq!(d.results[0].credential_infos[0].mechanism, 2);
        let name = |n: &str| {
            let mut u = UserName::default();
            u.name = s(n);
            u
        };
        q.users = Some(vec![name("alice"), name("zed"), name("zed")]);
        let d = describe(&creds, &q);
        let zed = d.results.iter().find(|x| x.user.as_str() == "zed").unwrap();
        assert_eq!(zed.error_code, ErrorCode::DUPLICATE_RESOURCE.0);
        q.users = Some(vec![name("nobody")]);
        let d = describe(&creds, &q);
        assert_eq!(
            d.results[0].error_message.as_deref(),
            Some("Attempt to describe a user credential that does not exist: nobody")
        );
    }

    #[test]
    fn the_same_user_twice_is_refused() {
        let creds = ScramCredentials::default();
        let mut r = AlterUserScramCredentialsRequest::default();
        r.upsertions = vec![upsert("a", 1, 4096), upsert("a", 2, 4096)];
        let (resp, changes) = alter(&creds, &r);
        assert!(changes.is_empty());
        assert_eq!(resp.results.len(), 1);
        assert_eq!(resp.results[0].error_code, ErrorCode::DUPLICATE_RESOURCE.0);
    }
}
