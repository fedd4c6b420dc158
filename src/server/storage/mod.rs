//! Storage: the durable log of coordinator records and topic changes ([`log`]), and the
//! recovery that replays it into the owner's state at start-up.

mod commit_mark;
pub mod format;
pub(crate) mod layout;
mod lock;
pub mod log;
pub mod log_tool;
pub(crate) mod migrate;
mod reader;

use std::path::Path;
use std::time::Instant;

use tracing::{info, warn};

use self::log::{LoadError, Log, LogEntry};
use super::kafka::State;

/// Apply one entry read back from a log (or, with several owners, a registry entry owner 0
/// logged) to `state`.
pub(crate) fn apply_entry(state: &mut State, entry: &LogEntry) -> Result<(), String> {
    match entry {
        LogEntry::Records(rs) => state
            .coord
            .replay_all(rs)
            .map_err(|(r, e)| format!("{} ({e})", r.summary())),
        LogEntry::Topics(ts) => state.replay_topics(ts),
        LogEntry::Acls(cs) => {
            cs.iter().for_each(|c| state.authorizer.apply(c));
            Ok(())
        }
        LogEntry::GroupConfigs(cs) => state.replay_group_configs(cs),
        LogEntry::Scram(cs) => {
            state.apply_scram(cs);
            Ok(())
        }
    }
}

/// Open the log in `dir`, replay it into `state` and arm the coordinator's timers, as Kafka does
/// when it loads a coordinator partition.
pub fn recover(dir: &Path, snapshot_bytes: u64, state: &mut State) -> Result<Log, LoadError> {
    let t0 = Instant::now();
    let (log, report) = Log::open(dir, snapshot_bytes, |entry| apply_entry(state, entry))?;
    if let Some((path, offset, dropped, reason)) = &report.truncated {
        warn!(file = %path.display(), offset, dropped, reason = %reason, "torn log tail truncated");
    }
    info!(
        snapshot = ?report.snapshot,
        segments = report.segments,
        batches = report.batches,
        records = report.records,
        bytes = report.bytes,
        groups = state.coord.group_ids().len(),
        topics = state.topics.len(),
        scram_credentials = state.scram.read().map(|c| c.len()).unwrap_or(0),
        ms = t0.elapsed().as_millis() as u64,
        waited_for_reader_ms = report.waited.as_millis() as u64,
        "log replayed"
    );
    // The owner sleeps on the coordinator's own table (`next_deadline`); the changes are logged.
    let t1 = Instant::now();
    let rearmed = state.coord.on_loaded(super::now_ms());
    state.after_replay();
    info!(
        timers = rearmed.len(),
        ms = t1.elapsed().as_millis() as u64,
        "timers re-armed, offset floors set"
    );
    info!(
        max_mb = state.coord.config().limits.max_data_plane_mb,
        "data plane (Produce/Fetch) is in memory only: produced records are lost on restart, \
         and partition offsets then restart above the highest committed offset"
    );
    Ok(log)
}
