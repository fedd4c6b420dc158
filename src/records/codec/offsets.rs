//! Committed offsets: `OffsetCommitValue` versions 0-4 (record type 1), and the legacy type 0.
//!
//! | version | layout |
//! |---|---|
//! | 0, 2 | offset int64, metadata string, commitTimestamp int64 |
//! | 1 | offset, metadata, commitTimestamp, expireTimestamp int64 |
//! | 3 | offset, leaderEpoch int32, metadata, commitTimestamp |
//! | 4 | as 3, flexible (compact string, tagged fields) |

use super::RecordCodecError;
use crate::records::OffsetCommitValue;
use crate::wire::{Reader, WireError, Writer};

pub(crate) const OFFSET_COMMIT: &str = "OffsetCommitValue";
pub(crate) const LEGACY_OFFSET_COMMIT: &str = "LegacyOffsetCommitValue";

/// The version groupcoord writes: the highest non-flexible one, as Kafka does.
pub(crate) const WRITE_VERSION: i16 = 3;

/// `leaderEpoch` when the version has none (the schema default).
const NO_LEADER_EPOCH: i32 = -1;

pub(crate) fn encode_offset_commit(v: &OffsetCommitValue) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new(OFFSET_COMMIT);
    w.i16(WRITE_VERSION);
    w.i64(v.offset);
    w.i32(v.leader_epoch);
    w.string("metadata", &v.metadata)?;
    w.i64(v.commit_timestamp);
    Ok(w.into_bytes())
}

/// `legacy`: record type 0, whose only value version is 0.
pub(crate) fn decode_offset_commit(
    bytes: &[u8],
    legacy: bool,
) -> Result<OffsetCommitValue, RecordCodecError> {
    let record = if legacy {
        LEGACY_OFFSET_COMMIT
    } else {
        OFFSET_COMMIT
    };
    let mut r = Reader::new(bytes, record);
    let version = r.i16("version")?;
    let max_version = if legacy { 0 } else { 4 };
    if !(0..=max_version).contains(&version) {
        return Err(RecordCodecError::UnsupportedVersion { record, version });
    }
    let flexible = version >= 4;
    let offset = r.i64("offset")?;
    let leader_epoch = if version >= 3 {
        r.i32("leaderEpoch")?
    } else {
        NO_LEADER_EPOCH
    };
    let metadata = if flexible {
        r.compact_string("metadata")?
    } else {
        r.string("metadata")?
    };
    let commit_timestamp = r.i64("commitTimestamp")?;
    if version == 1 {
        // Not modelled: groupcoord never writes it and streams clients never send it.
        r.i64("expireTimestamp")?;
    }
    if flexible {
        // The tagged fields (the topic id) are not modelled.
        r.skip_tagged_fields()?;
    }
    r.finish()?;
    Ok(OffsetCommitValue {
        offset,
        leader_epoch,
        metadata,
        commit_timestamp,
    })
}
