//! Native builds only. The records a restart reads most (committed offsets, type 1 at the
//! version groupcoord writes) and the batch framing, decoded straight from the bytes, without the
//! wire layer's field-path bookkeeping (which only matters for an error message).
//!
//! Every function here answers `None` for anything it does not handle or that does not check
//! out; the caller then decodes through the wire layer, which gives the exact error. So the
//! result is always the one the general path returns, only faster.

use crate::records::{OffsetCommitValue, Record, record_type};

/// A cursor over big-endian fields; `None` when the bytes run out.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn i16(&mut self) -> Option<i16> {
        self.array().map(i16::from_be_bytes)
    }

    fn i32(&mut self) -> Option<i32> {
        self.array().map(i32::from_be_bytes)
    }

    fn i64(&mut self) -> Option<i64> {
        self.array().map(i64::from_be_bytes)
    }

    /// `string`: int16 length (null is not one; a positive int16 is within Kafka's 32767),
    /// then UTF-8.
    fn string(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.i16()?).ok()?;
        std::str::from_utf8(self.take(len)?).ok()
    }
}

/// The records of a batch: its framing walked without the wire layer, offset commits decoded
/// here, other records by [`super::decode_record`]. `None` if anything does not check out: the
/// caller then decodes the batch again through the wire layer, which names the error.
pub(super) fn decode_batch(bytes: &[u8]) -> Option<Vec<Record>> {
    let mut count = 0;
    let mut rest = bytes;
    while !rest.is_empty() {
        rest = frame(rest)?.2;
        count += 1;
    }
    let mut out = Vec::with_capacity(count);
    let mut rest = bytes;
    while let Some((key, value, after)) = frame(rest) {
        let record = match offset_commit(key, value) {
            Some(r) => r,
            None => super::decode_record(key, value).ok()?,
        };
        out.push(record);
        rest = after;
    }
    Some(out)
}

/// The key and value of the record at the start of `bytes` (batch framing: key as `bytes`,
/// value as `nullable_bytes`), and the bytes after it.
type Framed<'a> = (&'a [u8], Option<&'a [u8]>, &'a [u8]);

/// The first record of a batch's bytes, framed.
fn frame(bytes: &[u8]) -> Option<Framed<'_>> {
    let mut c = Cursor(bytes);
    let key_len = usize::try_from(c.i32()?).ok()?;
    let key = c.take(key_len)?;
    let value = match c.i32()? {
        -1 => None,
        n => Some(c.take(usize::try_from(n).ok()?)?),
    };
    Some((key, value, c.0))
}

/// A committed offset (record type 1) whose value, if any, is at version 3.
fn offset_commit(key: &[u8], value: Option<&[u8]>) -> Option<Record> {
    let mut k = Cursor(key);
    if k.i16()? != record_type::OFFSET_COMMIT {
        return None;
    }
    let group_id = k.string()?;
    let topic = k.string()?;
    let partition = k.i32()?;
    if !k.0.is_empty() {
        return None;
    }
    let value = match value {
        None => None,
        Some(v) => Some(offset_commit_v3(v)?),
    };
    Some(Record::OffsetCommit {
        group_id: group_id.to_owned(),
        topic: topic.to_owned(),
        partition,
        value,
    })
}

fn offset_commit_v3(bytes: &[u8]) -> Option<OffsetCommitValue> {
    let mut v = Cursor(bytes);
    if v.i16()? != super::offsets::WRITE_VERSION {
        return None;
    }
    let offset = v.i64()?;
    let leader_epoch = v.i32()?;
    let metadata = v.string()?;
    let commit_timestamp = v.i64()?;
    if !v.0.is_empty() {
        return None;
    }
    Some(OffsetCommitValue {
        offset,
        leader_epoch,
        metadata: metadata.to_owned(),
        commit_timestamp,
    })
}
