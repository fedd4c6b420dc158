//! Primitive readers and writers of Kafka's flexible ("compact") encoding.
//!
//! Every read is bounds-checked before it touches the buffer, so no input can make these panic.
//! Both sides keep a path of field names and array indices so that an error can say exactly where
//! it happened, e.g. `StreamsGroupHeartbeatRequest.Topology.Subtopologies[0].SourceTopics`.

use std::fmt::Write as _;

use bytes::{Buf, BufMut};

use super::CodecError;
use crate::protocol::messages::{RawTaggedField, UnknownTaggedFields};
use crate::util::sort;

/// Longest string Kafka reads or writes (its generated code rejects anything above `0x7fff`).
pub(crate) const MAX_STRING_LEN: usize = 0x7fff;

/// Upper bound on the capacity reserved up front for a decoded array, whatever length it declares.
const MAX_PREALLOC: usize = 256;

/// Name of the path segment used for a struct's tagged-field section.
const TAGGED_FIELDS: &str = "TaggedFields";

#[derive(Debug, Clone, Copy)]
enum Seg {
    Field(&'static str),
    Index(usize),
}

/// Where in a message the codec currently is.
#[derive(Debug, Clone)]
struct Path {
    root: &'static str,
    segs: Vec<Seg>,
}

impl Path {
    fn new(root: &'static str) -> Self {
        Self {
            root,
            segs: Vec::new(),
        }
    }

    fn render(&self) -> String {
        let mut out = String::from(self.root);
        for seg in &self.segs {
            match seg {
                Seg::Field(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Seg::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
            }
        }
        out
    }

    fn push_field(&mut self, name: &'static str) -> bool {
        if name.is_empty() {
            false
        } else {
            self.segs.push(Seg::Field(name));
            true
        }
    }

    fn pop_if(&mut self, pushed: bool) {
        if pushed {
            self.segs.pop();
        }
    }
}

/// A struct with a wire form (one of the schema's structs).
pub(crate) trait WireStruct: Sized {
    fn write(&self, w: &mut Writer, version: i16) -> Result<(), CodecError>;
    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError>;
}

// ---------------------------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------------------------

/// Bounds-checked cursor over a message body.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    path: Path,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], root: &'static str) -> Self {
        Self {
            buf,
            path: Path::new(root),
        }
    }

    /// Bytes not yet consumed.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// The unconsumed rest of the input, to be handed to [`Reader::consumed_since`] later.
    pub(crate) fn mark(&self) -> &'a [u8] {
        self.buf
    }

    /// The bytes consumed since `mark` was taken.
    pub(crate) fn consumed_since(&self, mark: &'a [u8]) -> &'a [u8] {
        let consumed = mark.len().saturating_sub(self.buf.len());
        mark.get(..consumed).unwrap_or_default()
    }

    /// Runs `f` with `name` appended to the path (nothing is appended for an empty name).
    pub(crate) fn field<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T, CodecError>,
    ) -> Result<T, CodecError> {
        let pushed = self.path.push_field(name);
        let out = f(self);
        self.path.pop_if(pushed);
        out
    }

    fn truncated(&self, needed: usize) -> CodecError {
        CodecError::Truncated {
            path: self.path.render(),
            needed,
            remaining: self.buf.len(),
        }
    }

    fn need(&self, n: usize) -> Result<(), CodecError> {
        if self.buf.len() < n {
            Err(self.truncated(n))
        } else {
            Ok(())
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        self.need(n)?;
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    pub(crate) fn i8(&mut self, name: &'static str) -> Result<i8, CodecError> {
        self.field(name, |r| {
            r.need(1)?;
            Ok(r.buf.get_i8())
        })
    }

    pub(crate) fn i16(&mut self, name: &'static str) -> Result<i16, CodecError> {
        self.field(name, |r| {
            r.need(2)?;
            Ok(r.buf.get_i16())
        })
    }

    pub(crate) fn u16(&mut self, name: &'static str) -> Result<u16, CodecError> {
        self.field(name, |r| {
            r.need(2)?;
            Ok(r.buf.get_u16())
        })
    }

    pub(crate) fn i32(&mut self, name: &'static str) -> Result<i32, CodecError> {
        self.field(name, |r| {
            r.need(4)?;
            Ok(r.buf.get_i32())
        })
    }

    pub(crate) fn i64(&mut self, name: &'static str) -> Result<i64, CodecError> {
        self.field(name, |r| {
            r.need(8)?;
            Ok(r.buf.get_i64())
        })
    }

    /// Kafka reads any non-zero byte as `true`.
    pub(crate) fn bool(&mut self, name: &'static str) -> Result<bool, CodecError> {
        Ok(self.i8(name)? != 0)
    }

    /// Unsigned varint of at most 5 bytes whose value fits in a `u32`.
    pub(crate) fn uvarint(&mut self) -> Result<u32, CodecError> {
        let mut value: u32 = 0;
        for i in 0..5u32 {
            let Some(&byte) = self.buf.first() else {
                return Err(self.truncated(1));
            };
            self.buf.advance(1);
            if i == 4 && byte > 0x0f {
                // A fifth byte may only carry the top 4 bits and must end the varint.
                return Err(CodecError::InvalidVarint {
                    path: self.path.render(),
                });
            }
            value |= u32::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(CodecError::InvalidVarint {
            path: self.path.render(),
        })
    }

    /// Compact length: varint `n + 1`, with 0 meaning null.
    fn compact_len(&mut self) -> Result<Option<usize>, CodecError> {
        let raw = self.uvarint()?;
        Ok(raw.checked_sub(1).map(|n| n as usize))
    }

    fn unexpected_null(&self) -> CodecError {
        CodecError::UnexpectedNull {
            path: self.path.render(),
        }
    }

    fn utf8(&self, bytes: &'a [u8]) -> Result<String, CodecError> {
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|e| CodecError::InvalidUtf8 {
                path: self.path.render(),
                detail: e.to_string(),
            })
    }

    /// Compact nullable string.
    pub(crate) fn nullable_string(
        &mut self,
        name: &'static str,
    ) -> Result<Option<String>, CodecError> {
        self.field(name, |r| {
            let Some(len) = r.compact_len()? else {
                return Ok(None);
            };
            if len > MAX_STRING_LEN {
                return Err(CodecError::InvalidLength {
                    path: r.path.render(),
                    length: len as i64,
                });
            }
            let bytes = r.take(len)?;
            r.utf8(bytes).map(Some)
        })
    }

    /// Compact non-nullable string.
    pub(crate) fn string(&mut self, name: &'static str) -> Result<String, CodecError> {
        self.field(name, |r| match r.nullable_string("")? {
            Some(s) => Ok(s),
            None => Err(r.unexpected_null()),
        })
    }

    /// Classic nullable string with an int16 length (-1 = null), as in request header v2's
    /// `ClientId`.
    pub(crate) fn legacy_nullable_string(
        &mut self,
        name: &'static str,
    ) -> Result<Option<String>, CodecError> {
        self.field(name, |r| {
            let len = r.i16("")?;
            if len == -1 {
                return Ok(None);
            }
            let Ok(len) = usize::try_from(len) else {
                return Err(CodecError::InvalidLength {
                    path: r.path.render(),
                    length: i64::from(len),
                });
            };
            let bytes = r.take(len)?;
            r.utf8(bytes).map(Some)
        })
    }

    /// Compact nullable array whose elements are read by `f`.
    pub(crate) fn nullable_array<T>(
        &mut self,
        name: &'static str,
        mut f: impl FnMut(&mut Self) -> Result<T, CodecError>,
    ) -> Result<Option<Vec<T>>, CodecError> {
        self.field(name, |r| {
            let Some(len) = r.compact_len()? else {
                return Ok(None);
            };
            // Every element takes at least one byte, so a longer declaration cannot be honest.
            if len > r.remaining() {
                return Err(CodecError::LengthExceedsRemaining {
                    path: r.path.render(),
                    length: len,
                    remaining: r.remaining(),
                });
            }
            let mut out = Vec::with_capacity(len.min(MAX_PREALLOC));
            for i in 0..len {
                r.path.segs.push(Seg::Index(i));
                let item = f(r);
                r.path.segs.pop();
                out.push(item?);
            }
            Ok(Some(out))
        })
    }

    /// Compact non-nullable array.
    pub(crate) fn array<T>(
        &mut self,
        name: &'static str,
        f: impl FnMut(&mut Self) -> Result<T, CodecError>,
    ) -> Result<Vec<T>, CodecError> {
        self.field(name, |r| match r.nullable_array("", f)? {
            Some(v) => Ok(v),
            None => Err(r.unexpected_null()),
        })
    }

    /// Compact non-nullable array of structs.
    pub(crate) fn structs<T: WireStruct>(
        &mut self,
        name: &'static str,
        version: i16,
    ) -> Result<Vec<T>, CodecError> {
        self.array(name, |r| T::read(r, version))
    }

    /// Compact nullable array of structs.
    pub(crate) fn nullable_structs<T: WireStruct>(
        &mut self,
        name: &'static str,
        version: i16,
    ) -> Result<Option<Vec<T>>, CodecError> {
        self.nullable_array(name, |r| T::read(r, version))
    }

    /// A non-nullable struct field (written inline, no marker).
    pub(crate) fn struct_field<T: WireStruct>(
        &mut self,
        name: &'static str,
        version: i16,
    ) -> Result<T, CodecError> {
        self.field(name, |r| T::read(r, version))
    }

    /// A nullable struct field: an int8 marker (negative = null, as Kafka reads it) then the
    /// struct, read by `f`.
    pub(crate) fn nullable_struct_with<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T, CodecError>,
    ) -> Result<Option<T>, CodecError> {
        self.field(name, |r| {
            let marker = r.i8("")?;
            if marker < 0 { Ok(None) } else { f(r).map(Some) }
        })
    }

    /// A nullable struct field of a [`WireStruct`].
    pub(crate) fn nullable_struct<T: WireStruct>(
        &mut self,
        name: &'static str,
        version: i16,
    ) -> Result<Option<T>, CodecError> {
        self.nullable_struct_with(name, |r| T::read(r, version))
    }

    /// A tagged-field section of a struct with no known tagged fields: every field is kept.
    pub(crate) fn tagged_fields(&mut self) -> Result<UnknownTaggedFields, CodecError> {
        self.tagged_fields_with(|_, _, _| Ok(false))
    }

    /// A tagged-field section. `known(reader, tag, data)` decodes a tag the struct knows and
    /// returns `true`; it returns `false` for unknown tags, which are kept verbatim. Tags must be
    /// strictly ascending.
    pub(crate) fn tagged_fields_with(
        &mut self,
        mut known: impl FnMut(&Self, u32, &'a [u8]) -> Result<bool, CodecError>,
    ) -> Result<UnknownTaggedFields, CodecError> {
        self.field(TAGGED_FIELDS, |r| {
            let count = r.uvarint()? as usize;
            // Each field needs at least a tag byte and a size byte.
            if count > r.remaining() / 2 {
                return Err(CodecError::LengthExceedsRemaining {
                    path: r.path.render(),
                    length: count,
                    remaining: r.remaining(),
                });
            }
            let mut unknown = Vec::new();
            let mut previous: Option<u32> = None;
            for _ in 0..count {
                let tag = r.uvarint()?;
                if let Some(previous) = previous {
                    if tag == previous {
                        return Err(CodecError::DuplicateTaggedField {
                            path: r.path.render(),
                            tag,
                        });
                    }
                    if tag < previous {
                        return Err(CodecError::TaggedFieldsOutOfOrder {
                            path: r.path.render(),
                            previous,
                            tag,
                        });
                    }
                }
                previous = Some(tag);
                let size = r.uvarint()? as usize;
                let data = r.take(size)?;
                if !known(r, tag, data)? {
                    unknown.push(RawTaggedField {
                        tag,
                        data: data.to_vec(),
                    });
                }
            }
            Ok(unknown)
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

/// Growable output buffer with the same path bookkeeping as [`Reader`].
pub(crate) struct Writer {
    buf: Vec<u8>,
    path: Path,
}

impl Writer {
    pub(crate) fn new(root: &'static str) -> Self {
        Self {
            buf: Vec::new(),
            path: Path::new(root),
        }
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// The current path, with `name` appended when it is not empty.
    pub(crate) fn path_of(&self, name: &'static str) -> String {
        let mut path = self.path.clone();
        path.push_field(name);
        path.render()
    }

    /// Runs `f` with `name` appended to the path.
    pub(crate) fn field<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T, CodecError>,
    ) -> Result<T, CodecError> {
        let pushed = self.path.push_field(name);
        let out = f(self);
        self.path.pop_if(pushed);
        out
    }

    /// The error for a field that is absent at `version` but holds a non-default value.
    pub(crate) fn not_in_version(&self, name: &'static str, version: i16) -> CodecError {
        CodecError::FieldNotInVersion {
            path: self.path_of(name),
            version,
        }
    }

    pub(crate) fn i8(&mut self, v: i8) {
        self.buf.put_i8(v);
    }

    pub(crate) fn i16(&mut self, v: i16) {
        self.buf.put_i16(v);
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.put_u16(v);
    }

    pub(crate) fn i32(&mut self, v: i32) {
        self.buf.put_i32(v);
    }

    pub(crate) fn i64(&mut self, v: i64) {
        self.buf.put_i64(v);
    }

    pub(crate) fn bool(&mut self, v: bool) {
        self.buf.put_u8(u8::from(v));
    }

    pub(crate) fn raw(&mut self, bytes: &[u8]) {
        self.buf.put_slice(bytes);
    }

    pub(crate) fn uvarint(&mut self, mut v: u32) {
        while v >= 0x80 {
            // Truncation to the low 7 bits is the point of the encoding.
            self.buf.put_u8((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.put_u8(v as u8);
    }

    /// Writes the compact length `len + 1`.
    fn compact_len(&mut self, len: usize) -> Result<(), CodecError> {
        match u32::try_from(len).ok().and_then(|n| n.checked_add(1)) {
            Some(n) => {
                self.uvarint(n);
                Ok(())
            }
            None => Err(CodecError::InvalidValue {
                path: self.path.render(),
                reason: format!("length {len} does not fit a compact length"),
            }),
        }
    }

    fn check_string_len(&self, s: &str) -> Result<(), CodecError> {
        if s.len() > MAX_STRING_LEN {
            Err(CodecError::InvalidValue {
                path: self.path.render(),
                reason: format!(
                    "string of {} bytes is longer than the maximum of {MAX_STRING_LEN}",
                    s.len()
                ),
            })
        } else {
            Ok(())
        }
    }

    /// Compact nullable string.
    pub(crate) fn nullable_string(
        &mut self,
        name: &'static str,
        s: Option<&str>,
    ) -> Result<(), CodecError> {
        self.field(name, |w| match s {
            None => {
                w.uvarint(0);
                Ok(())
            }
            Some(s) => {
                w.check_string_len(s)?;
                w.compact_len(s.len())?;
                w.buf.put_slice(s.as_bytes());
                Ok(())
            }
        })
    }

    /// Compact non-nullable string.
    pub(crate) fn string(&mut self, name: &'static str, s: &str) -> Result<(), CodecError> {
        self.nullable_string(name, Some(s))
    }

    /// Classic nullable string with an int16 length (-1 = null).
    pub(crate) fn legacy_nullable_string(
        &mut self,
        name: &'static str,
        s: Option<&str>,
    ) -> Result<(), CodecError> {
        self.field(name, |w| {
            match s {
                None => w.i16(-1),
                Some(s) => {
                    w.check_string_len(s)?;
                    // check_string_len bounds the length by 0x7fff.
                    w.i16(s.len() as i16);
                    w.buf.put_slice(s.as_bytes());
                }
            }
            Ok(())
        })
    }

    /// Compact nullable array whose elements are written by `f`.
    pub(crate) fn nullable_array<T>(
        &mut self,
        name: &'static str,
        items: Option<&[T]>,
        mut f: impl FnMut(&mut Self, &T) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        self.field(name, |w| {
            let Some(items) = items else {
                w.uvarint(0);
                return Ok(());
            };
            w.compact_len(items.len())?;
            for (i, item) in items.iter().enumerate() {
                w.path.segs.push(Seg::Index(i));
                let out = f(w, item);
                w.path.segs.pop();
                out?;
            }
            Ok(())
        })
    }

    /// Compact non-nullable array.
    pub(crate) fn array<T>(
        &mut self,
        name: &'static str,
        items: &[T],
        f: impl FnMut(&mut Self, &T) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        self.nullable_array(name, Some(items), f)
    }

    pub(crate) fn strings(
        &mut self,
        name: &'static str,
        items: &[String],
    ) -> Result<(), CodecError> {
        self.array(name, items, |w, s| w.string("", s))
    }

    pub(crate) fn structs<T: WireStruct>(
        &mut self,
        name: &'static str,
        items: &[T],
        version: i16,
    ) -> Result<(), CodecError> {
        self.array(name, items, |w, item| item.write(w, version))
    }

    pub(crate) fn nullable_structs<T: WireStruct>(
        &mut self,
        name: &'static str,
        items: Option<&[T]>,
        version: i16,
    ) -> Result<(), CodecError> {
        self.nullable_array(name, items, |w, item| item.write(w, version))
    }

    /// A non-nullable struct field (inline, no marker).
    pub(crate) fn struct_field<T: WireStruct>(
        &mut self,
        name: &'static str,
        item: &T,
        version: i16,
    ) -> Result<(), CodecError> {
        self.field(name, |w| item.write(w, version))
    }

    /// A nullable struct field: int8 -1 for null, 1 then the struct (written by `f`) otherwise.
    pub(crate) fn nullable_struct_with<T>(
        &mut self,
        name: &'static str,
        item: Option<&T>,
        f: impl FnOnce(&mut Self, &T) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        self.field(name, |w| match item {
            None => {
                w.i8(-1);
                Ok(())
            }
            Some(item) => {
                w.i8(1);
                f(w, item)
            }
        })
    }

    pub(crate) fn nullable_struct<T: WireStruct>(
        &mut self,
        name: &'static str,
        item: Option<&T>,
        version: i16,
    ) -> Result<(), CodecError> {
        self.nullable_struct_with(name, item, |w, item| item.write(w, version))
    }

    /// A tagged-field section of a struct with no known tagged fields.
    pub(crate) fn tagged_fields(&mut self, unknown: &[RawTaggedField]) -> Result<(), CodecError> {
        self.tagged_fields_with(Vec::new(), unknown)
    }

    /// A tagged-field section: the struct's known tagged fields (`(tag, encoded value)`, only
    /// those to be written) merged in ascending tag order with the unknown ones it preserved.
    /// Unknown fields need not be sorted; a tag present twice is an error.
    pub(crate) fn tagged_fields_with(
        &mut self,
        known: Vec<(u32, Vec<u8>)>,
        unknown: &[RawTaggedField],
    ) -> Result<(), CodecError> {
        self.field(TAGGED_FIELDS, |w| {
            let mut all: Vec<(u32, &[u8])> = known
                .iter()
                .map(|(tag, data)| (*tag, data.as_slice()))
                .chain(unknown.iter().map(|f| (f.tag, f.data.as_slice())))
                .collect();
            sort::by_key(&mut all, |(tag, _)| *tag);
            for pair in all.windows(2) {
                if let [(a, _), (b, _)] = pair
                    && a == b
                {
                    return Err(CodecError::DuplicateTaggedField {
                        path: w.path.render(),
                        tag: *a,
                    });
                }
            }
            let count = u32::try_from(all.len()).map_err(|_| CodecError::InvalidValue {
                path: w.path.render(),
                reason: "too many tagged fields".to_owned(),
            })?;
            w.uvarint(count);
            for (tag, data) in all {
                w.uvarint(tag);
                let size = u32::try_from(data.len()).map_err(|_| CodecError::InvalidValue {
                    path: w.path.render(),
                    reason: format!("tagged field {tag} is too large"),
                })?;
                w.uvarint(size);
                w.buf.put_slice(data);
            }
            Ok(())
        })
    }
}
