//! `groupcoord storage format --data-dir DIR --add-scram 'SCRAM-SHA-512=[name=admin,password=admin-secret]'`:
//! SCRAM credentials written into a new data directory before the first start (Kafka's
//! `kafka-storage format --add-scram`), so that a super user exists before any client connects.
//! Only the salted hashes are written. With several owners (`group.coordinator.threads`,
//! `--owners`) the directory is made sharded, as `serve` with that count makes it, and the
//! credentials (global entries) go to owner 0's shard (docs/sharding.md).

use std::path::Path;

use super::layout;
use super::log::{Log, LogEntry, ScramChange, parse_numbered};
use super::migrate::Migration;
use crate::server::routing::COORDINATOR_PARTITIONS;
use crate::server::security::scram::{MAX_ITERATIONS, MIN_ITERATIONS, ScramCredential, ScramHash};

/// One parsed `--add-scram` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddScram {
    /// The mechanism.
    pub hash: ScramHash,
    /// The user.
    pub name: String,
    /// The password (hashed before anything is written).
    pub password: String,
    /// PBKDF2 iterations (default 4096, Kafka's).
    pub iterations: i32,
}

/// Parse `MECHANISM=[key=value,...]` with keys `name`, `password`, `iterations` (values may be
/// double-quoted to hold `,` or `]`).
pub fn parse_add_scram(s: &str) -> Result<AddScram, String> {
    let (mech, rest) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected MECHANISM=[name=...,password=...]"))?;
    let hash = ScramHash::from_name(mech.trim()).ok_or_else(|| {
        format!("`{mech}`: unknown SCRAM mechanism (SCRAM-SHA-256 or SCRAM-SHA-512)")
    })?;
    let body = rest
        .trim()
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| format!("`{s}`: the credential goes in [...]"))?;
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut chars = body.chars().peekable();
    loop {
        let mut key = String::new();
        for c in chars.by_ref() {
            if c == '=' {
                break;
            }
            key.push(c);
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            let mut closed = false;
            for c in chars.by_ref() {
                if c == '"' {
                    closed = true;
                    break;
                }
                value.push(c);
            }
            if !closed {
                return Err(format!("`{s}`: unterminated quote"));
            }
            match chars.next() {
                None | Some(',') => {}
                Some(c) => return Err(format!("`{s}`: unexpected `{c}` after a quoted value")),
            }
        } else {
            for c in chars.by_ref() {
                if c == ',' {
                    break;
                }
                value.push(c);
            }
        }
        fields.push((key.trim().to_string(), value));
        if chars.peek().is_none() {
            break;
        }
    }
    let mut name = None;
    let mut password = None;
    let mut iterations = MIN_ITERATIONS;
    for (k, v) in fields {
        match k.as_str() {
            "name" => name = Some(v),
            "password" => password = Some(v),
            "iterations" => {
                iterations = v
                    .trim()
                    .parse()
                    .map_err(|_| format!("`{s}`: iterations must be a number"))?
            }
            "salt" | "saltedpassword" => {
                return Err(format!("`{s}`: give the password; {k} is not supported"));
            }
            other => return Err(format!("`{s}`: unknown field `{other}`")),
        }
    }
    let name = name
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("`{s}`: no name"))?;
    let password = password
        .filter(|p| !p.is_empty())
        .ok_or_else(|| format!("`{s}`: no password"))?;
    if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
        return Err(format!(
            "`{s}`: iterations must be from {MIN_ITERATIONS} to {MAX_ITERATIONS}"
        ));
    }
    Ok(AddScram {
        hash,
        name,
        password,
        iterations,
    })
}

/// Format `dir` for `owners` owners with the given credentials; refuses a directory that
/// already holds a log (or was written with another owner count).
pub fn format(dir: &Path, owners: usize, add_scram: &[String]) -> Result<String, String> {
    let creds = add_scram
        .iter()
        .map(|s| parse_add_scram(s))
        .collect::<Result<Vec<_>, _>>()?;
    if owners == 0 || owners > COORDINATOR_PARTITIONS as usize {
        return Err(format!(
            "owners {owners}: must be 1 to {COORDINATOR_PARTITIONS}"
        ));
    }
    let formatted = |d: &Path| -> Result<(), String> {
        if let Ok(rd) = std::fs::read_dir(d) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if parse_numbered(&name, "segment-", ".log").is_some()
                    || parse_numbered(&name, "snapshot-", ".snap").is_some()
                {
                    return Err(format!(
                        "{} is already formatted (it holds {name}); add users to the running \
                         server with AlterUserScramCredentials",
                        dir.display()
                    ));
                }
            }
        }
        Ok(())
    };
    formatted(dir)?;
    // The layout `serve --owners N` makes (and its refusal of another count); owner 0's log.
    let dirs = layout::prepare(
        dir,
        owners,
        COORDINATOR_PARTITIONS,
        false,
        Migration::default(),
    )?;
    formatted(&dirs[0])?;
    let (mut log, _) = Log::open(&dirs[0], u64::MAX, |_| Ok(())).map_err(|e| e.to_string())?;
    let changes: Vec<ScramChange> = creds
        .iter()
        .map(|c| ScramChange::Upsert {
            user: c.name.clone(),
            hash: c.hash,
            credential: ScramCredential::from_password(c.hash, &c.password, c.iterations),
        })
        .collect();
    if !changes.is_empty() {
        log.append(&[LogEntry::Scram(changes)])
            .map_err(|e| format!("append: {e}"))?;
    }
    log.sync().map_err(|e| format!("fsync: {e}"))?;
    let users: Vec<String> = creds
        .iter()
        .map(|c| format!("{} ({})", c.name, c.hash.mechanism_name()))
        .collect();
    Ok(format!(
        "Formatted {}{} with {} SCRAM credential{}{}",
        dir.display(),
        if owners == 1 {
            String::new()
        } else {
            format!(" for {owners} owners")
        },
        creds.len(),
        if creds.len() == 1 { "" } else { "s" },
        if users.is_empty() {
            String::new()
        } else {
            format!(": {}", users.join(", "))
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_scram_values_parse_as_kafka_storage_takes_them() {
        let a = parse_add_scram("SCRAM-SHA-512=[name=admin,password=admin-secret]").unwrap();
        assert_eq!(a.hash, ScramHash::Sha512);
        assert_eq!(a.name, "admin");
        assert_eq!(a.password, "admin-secret");
        assert_eq!(a.iterations, 4096);
        let b = parse_add_scram(r#"SCRAM-SHA-256=[name="al,ice",password="p]w",iterations=8192]"#)
            .unwrap();
        assert_eq!(
            (b.name.as_str(), b.password.as_str(), b.iterations),
            ("al,ice", "p]w", 8192)
        );
        for bad in [
            "SCRAM-SHA-1=[name=a,password=b]",
            "SCRAM-SHA-512=name=a,password=b",
            "SCRAM-SHA-512=[name=a]",
            "SCRAM-SHA-512=[password=b]",
            "SCRAM-SHA-512=[name=a,password=b,iterations=100]",
            "SCRAM-SHA-512=[name=a,password=b,color=red]",
            "SCRAM-SHA-512=[name=\"a,password=b]",
        ] {
            assert!(parse_add_scram(bad).is_err(), "{bad}");
        }
    }

    /// With several owners the directory is sharded as `serve --owners N` makes it and the
    /// credentials are in owner 0's log; a second format, or one with another count, is refused.
    #[test]
    fn a_sharded_format_puts_the_credentials_in_owner_0s_shard() {
        let dir = std::env::temp_dir().join(format!("groupcoord-format-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let admin = ["SCRAM-SHA-512=[name=admin,password=admin-secret]".to_string()];
        let msg = format(&dir, 2, &admin).unwrap();
        assert!(msg.contains("for 2 owners"), "{msg}");
        let dirs = layout::prepare(&dir, 2, 50, false, Migration::default()).unwrap();
        let mut scram = Vec::new();
        for (i, d) in dirs.iter().enumerate() {
            Log::open(d, u64::MAX, |e| {
                if let LogEntry::Scram(cs) = e {
                    scram.push((i, cs.len()));
                }
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(scram, vec![(0, 1)]);
        assert!(
            format(&dir, 2, &admin)
                .unwrap_err()
                .contains("already formatted")
        );
        let e = format(&dir, 1, &admin).unwrap_err();
        assert!(e.contains("written by 2 owners"), "{e}");
        assert!(format(&dir, 0, &admin).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
