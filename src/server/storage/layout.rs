//! The data directory's layout by owner count (docs/sharding.md, "Log layout"). One owner: the
//! log is the data directory itself, as it always was. N owners: `shard-000/` ... one complete
//! log per owner, and a `SHARDS` file, written last when the directory is created, that records
//! N. A directory is only ever loaded whole with the count it was written with: any other count,
//! a missing shard directory or a damaged `SHARDS` file stops start-up with an error naming the
//! directory (never a silently empty shard, which would drop acknowledged groups). Another
//! count is taken only when a migration is asked for (`--migrate-owners`, `storage::migrate`).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::migrate::{self, Migration};

/// The file that records the owner count of a sharded data directory.
pub const SHARDS_FILE: &str = "SHARDS";

/// The log directory of owner `i` in a sharded data directory.
pub fn shard_dir(data_dir: &Path, i: usize) -> PathBuf {
    data_dir.join(format!("shard-{i:03}"))
}

fn shards_text(owners: usize, partitions: u32) -> String {
    format!("groupcoord shards v1\nowners={owners}\npartitions={partitions}\n")
}

/// Reads `SHARDS`: `Ok(None)` when absent, the owner count when valid.
pub(super) fn read_shards(data_dir: &Path, partitions: u32) -> Result<Option<usize>, String> {
    let path = data_dir.join(SHARDS_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let bad = || {
        format!(
            "{}: not a groupcoord SHARDS file (expected `groupcoord shards v1`, `owners=N`, \
             `partitions=P`); the shards of this directory cannot be trusted",
            path.display()
        )
    };
    let mut lines = text.lines();
    if lines.next() != Some("groupcoord shards v1") {
        return Err(bad());
    }
    let owners: usize = lines
        .next()
        .and_then(|l| l.strip_prefix("owners="))
        .and_then(|n| n.parse().ok())
        .filter(|n| (1..=partitions as usize).contains(n))
        .ok_or_else(bad)?;
    let parts: u32 = lines
        .next()
        .and_then(|l| l.strip_prefix("partitions="))
        .and_then(|n| n.parse().ok())
        .ok_or_else(bad)?;
    if parts != partitions {
        return Err(format!(
            "{}: cut for {parts} coordinator partitions, this server places groups on \
             {partitions}",
            path.display()
        ));
    }
    Ok(Some(owners))
}

/// Whether `dir` holds a log in the one-owner layout (segments or snapshots at its top).
fn has_single_log(dir: &Path) -> Result<bool, String> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    for e in entries {
        let e = e.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = e.file_name().to_string_lossy().to_string();
        if (name.starts_with("segment-") && name.ends_with(".log"))
            || (name.starts_with("snapshot-") && name.ends_with(".snap"))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The log directories to load for `owners` owners, in owner order, after checking that the
/// data directory was written with that count (and creating the shard directories of a new
/// one, `SHARDS` last, fsynced). A different count is refused with an error naming the
/// directory, both counts and `--migrate-owners`, unless `migrate` asks to move the groups to
/// `owners` owners first (`storage::migrate`). An interrupted migration is completed or undone
/// before anything else.
pub(crate) fn prepare(
    data_dir: &Path,
    owners: usize,
    partitions: u32,
    migrate: bool,
    how: Migration,
) -> Result<Vec<PathBuf>, String> {
    migrate::finish_interrupted(data_dir, partitions)?;
    let recorded = read_shards(data_dir, partitions)?;
    let refuse = |had: usize| {
        format!(
            "data directory {} was written by {had} owner{} (group.coordinator.threads); \
             started with {owners}: start it with {had}, or add --migrate-owners \
             (groupcoord.migrate.owners=true) to move its groups to {owners} owner{}",
            data_dir.display(),
            if had == 1 { "" } else { "s" },
            if owners == 1 { "" } else { "s" },
        )
    };
    // The count the directory was written with when it differs: (count, sharded layout).
    let other = match recorded {
        Some(had) if had != owners => Some((had, true)),
        None if owners > 1 && has_single_log(data_dir)? => Some((1, false)),
        None if owners == 1 => return Ok(vec![data_dir.to_path_buf()]),
        None => {
            create(data_dir, owners, partitions)?;
            None
        }
        Some(_) => None,
    };
    if let Some((had, sharded)) = other {
        if !migrate {
            return Err(refuse(had));
        }
        let old = if sharded {
            shard_dirs(data_dir, had)?
        } else {
            vec![data_dir.to_path_buf()]
        };
        migrate::migrate(data_dir, &old, owners, partitions, how)?;
    }
    shard_dirs(data_dir, owners)
}

/// The shard directories `SHARDS` names, each of which must exist.
fn shard_dirs(data_dir: &Path, owners: usize) -> Result<Vec<PathBuf>, String> {
    let dirs: Vec<PathBuf> = (0..owners).map(|i| shard_dir(data_dir, i)).collect();
    for d in &dirs {
        if !d.is_dir() {
            return Err(format!(
                "shard directory {} is missing ({} names {owners} owners): its groups would be \
                 lost; restore it from a backup",
                d.display(),
                data_dir.join(SHARDS_FILE).display()
            ));
        }
    }
    Ok(dirs)
}

/// A new sharded data directory: the shard directories, then `SHARDS` ([`write_shards`]). A
/// crash before the rename leaves no `SHARDS` and empty shard directories: the next start
/// creates it again.
fn create(data_dir: &Path, owners: usize, partitions: u32) -> Result<(), String> {
    let io = |p: &Path, e: io::Error| format!("{}: {e}", p.display());
    fs::create_dir_all(data_dir).map_err(|e| io(data_dir, e))?;
    for i in 0..owners {
        let d = shard_dir(data_dir, i);
        fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
    }
    write_shards(data_dir, owners, partitions)
}

/// Writes `SHARDS` atomically: a temporary file, fsynced, renamed, the directory fsynced.
pub(super) fn write_shards(data_dir: &Path, owners: usize, partitions: u32) -> Result<(), String> {
    let io = |p: &Path, e: io::Error| format!("{}: {e}", p.display());
    let tmp = data_dir.join(format!("{SHARDS_FILE}.tmp"));
    let mut f = fs::File::create(&tmp).map_err(|e| io(&tmp, e))?;
    f.write_all(shards_text(owners, partitions).as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| io(&tmp, e))?;
    let path = data_dir.join(SHARDS_FILE);
    fs::rename(&tmp, &path).map_err(|e| io(&path, e))?;
    fs::File::open(data_dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io(data_dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("groupcoord-layout-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn one_owner_is_the_directory_itself_and_n_owners_are_shards() {
        let dir = temp_dir("counts").join("d");
        assert_eq!(
            prepare(&dir, 1, 50, false, Migration::default()).unwrap(),
            vec![dir.clone()]
        );
        assert!(!dir.join(SHARDS_FILE).exists(), "one owner: today's layout");
        let dirs = prepare(&dir, 3, 50, false, Migration::default()).unwrap();
        assert_eq!(dirs.len(), 3);
        assert!(dirs[2].ends_with("shard-002") && dirs[2].is_dir());
        assert_eq!(read_shards(&dir, 50).unwrap(), Some(3));
        assert_eq!(
            prepare(&dir, 3, 50, false, Migration::default()).unwrap(),
            dirs,
            "same count: loads"
        );
    }

    #[test]
    fn other_counts_missing_shards_and_damage_are_refused_by_name() {
        let dir = temp_dir("refused");
        prepare(&dir, 2, 50, false, Migration::default()).unwrap();
        let e = prepare(&dir, 1, 50, false, Migration::default()).unwrap_err();
        assert!(
            e.contains(&dir.display().to_string()) && e.contains("2 owners"),
            "{e}"
        );
        assert!(e.contains("started with 1"), "{e}");
        assert!(
            e.contains("--migrate-owners"),
            "the refusal names the switch: {e}"
        );
        let e = prepare(&dir, 4, 50, false, Migration::default()).unwrap_err();
        assert!(
            e.contains("2 owners") && e.contains("started with 4"),
            "{e}"
        );
        fs::remove_dir_all(shard_dir(&dir, 1)).unwrap();
        let e = prepare(&dir, 2, 50, false, Migration::default()).unwrap_err();
        assert!(e.contains("shard-001") && e.contains("missing"), "{e}");
        fs::write(dir.join(SHARDS_FILE), "owners=two").unwrap();
        let e = prepare(&dir, 2, 50, false, Migration::default()).unwrap_err();
        assert!(
            e.contains("SHARDS") && e.contains("not a groupcoord SHARDS file"),
            "{e}"
        );

        // A one-owner log is not taken for an empty sharded directory.
        let single = dir.join("single");
        fs::create_dir_all(&single).unwrap();
        fs::write(single.join("segment-00000000000000000000.log"), b"x").unwrap();
        let e = prepare(&single, 2, 50, false, Migration::default()).unwrap_err();
        assert!(
            e.contains("written by 1 owner ") && e.contains("started with 2"),
            "{e}"
        );
    }
}
