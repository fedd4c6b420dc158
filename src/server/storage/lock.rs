//! The `--data-dir` lock: one server per data directory.
//!
//! `LOCK` in the data directory is locked with `flock(LOCK_EX | LOCK_NB)` (std's
//! `File::try_lock`) for the lifetime of the log and holds the owner's pid as text. The kernel
//! releases the lock when its holder exits, however it exits, so a lock file left by a dead
//! process is simply locked again (its stale pid overwritten); a live holder makes start-up fail
//! naming its pid. (flock locks belong to the open file, so a second server in the same process,
//! as in the tests, is refused too.)

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub const LOCK_FILE: &str = "LOCK";

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "data directory {dir} is in use by another groupcoord server (pid {pid}, lock file {file}); \
         stop it first, or use another --data-dir"
    )]
    Held {
        dir: PathBuf,
        file: PathBuf,
        pid: String,
    },
    #[error("cannot lock {file}: {source}")]
    Io { file: PathBuf, source: io::Error },
}

/// Held while the value lives.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    /// Lock `dir` (which must exist) for this process.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, LockError> {
        Self::acquire_file(dir, LOCK_FILE)
    }

    /// The same lock on another file of `dir` (an owner-count migration locks `MIGRATE.LOCK`
    /// beside a one-owner log's own `LOCK`, which its load takes).
    pub fn acquire_file(dir: &Path, name: &str) -> Result<DataDirLock, LockError> {
        let path = dir.join(name);
        let io_err = |source| LockError::Io {
            file: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(LockError::Held {
                    dir: dir.to_path_buf(),
                    file: path.clone(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.to_string()
                    },
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io_err(e)),
        }
        // Ours now: replace whatever pid a previous (dead) holder left.
        file.set_len(0).map_err(io_err)?;
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        writeln!(file, "{}", std::process::id()).map_err(io_err)?;
        file.sync_all().map_err(io_err)?;
        Ok(DataDirLock { _file: file })
    }
}
