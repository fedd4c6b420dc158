//! The writing half of the wire layer: a growable buffer that refuses values Kafka cannot
//! represent (with the field path) instead of cutting them.

use super::path::{self, Path, Prefix};
use super::varint;
use super::{Codec, MAX_STRING_LEN, RawTaggedField, WireError};
use crate::util::sort;

/// Path segment of a struct's tagged-field section.
const TAGGED_FIELDS: &str = "TaggedFields";

/// Bytes under construction, with the same path bookkeeping as [`super::Reader`].
///
/// Fixed-size values cannot fail; strings, bytes, arrays and tagged fields return
/// [`WireError::InvalidValue`] for a length Kafka cannot represent, naming the field.
pub struct Writer {
    buf: Vec<u8>,
    path: Path,
}

impl Writer {
    /// An empty writer; `root` (a message or record name) starts every error path.
    pub fn new(root: &'static str) -> Self {
        Writer {
            buf: Vec::new(),
            path: Path::new(root),
        }
    }

    /// An empty writer at the current path, for a value written apart (a tagged field's
    /// payload).
    pub fn nested(&self) -> Writer {
        Writer {
            buf: Vec::new(),
            path: self.path.clone(),
        }
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// The bytes written so far (e.g. to checksum them before the checksum is written).
    pub fn written(&self) -> &[u8] {
        &self.buf
    }

    /// The current path, with `name` appended when it is not empty.
    pub fn path_of(&self, name: &'static str) -> String {
        self.path.render_with(name)
    }

    /// Runs `f` with `name` appended to the path.
    pub fn field<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T, WireError>,
    ) -> Result<T, WireError> {
        path::in_field(self, |w| &mut w.path, name, f)
    }

    /// The error for a field that is absent at `version` but holds a non-default value.
    pub fn not_in_version(&self, name: &'static str, version: i16) -> WireError {
        WireError::FieldNotInVersion {
            path: self.path_of(name),
            version,
        }
    }

    fn invalid(&self, reason: String) -> WireError {
        WireError::InvalidValue {
            path: self.path.render(),
            reason,
        }
    }

    /// `int8`.
    pub fn i8(&mut self, v: i8) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// `int16`, big-endian.
    pub fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// `uint16`, big-endian.
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// `int32`, big-endian.
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// `uint32`, big-endian.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// `int64`, big-endian.
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// `bool`: 1 or 0.
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// `uuid`: 16 raw bytes.
    pub fn uuid(&mut self, v: &[u8; 16]) {
        self.buf.extend_from_slice(v);
    }

    /// Unsigned varint.
    pub fn uvarint(&mut self, v: u32) {
        varint::put_uvarint(&mut self.buf, v);
    }

    /// `varint`: zigzag-encoded signed value.
    pub fn varint(&mut self, v: i32) {
        self.uvarint(varint::zigzag(v));
    }

    /// Raw bytes, no length prefix.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// A length (`None` = null) with the given prefix.
    fn len(&mut self, prefix: Prefix, len: Option<usize>) -> Result<(), WireError> {
        let Some(len) = len else {
            match prefix {
                Prefix::Int16 => self.i16(-1),
                Prefix::Int32 => self.i32(-1),
                Prefix::Compact => self.uvarint(0),
            }
            return Ok(());
        };
        let fits = match prefix {
            Prefix::Int16 => i16::try_from(len).map(|n| self.i16(n)).is_ok(),
            Prefix::Int32 => i32::try_from(len).map(|n| self.i32(n)).is_ok(),
            Prefix::Compact => u32::try_from(len)
                .ok()
                .and_then(|n| n.checked_add(1))
                .map(|n| self.uvarint(n))
                .is_some(),
        };
        if fits {
            Ok(())
        } else {
            Err(self.invalid(format!("length {len} does not fit its {prefix:?} prefix")))
        }
    }

    fn prefixed_bytes(
        &mut self,
        name: &'static str,
        prefix: Prefix,
        b: Option<&[u8]>,
    ) -> Result<(), WireError> {
        self.field(name, |w| {
            w.len(prefix, b.map(<[u8]>::len))?;
            w.raw(b.unwrap_or_default());
            Ok(())
        })
    }

    fn prefixed_string(
        &mut self,
        name: &'static str,
        prefix: Prefix,
        s: Option<&str>,
    ) -> Result<(), WireError> {
        self.field(name, |w| {
            if let Some(s) = s
                && s.len() > MAX_STRING_LEN
            {
                return Err(w.invalid(format!(
                    "string of {} bytes is longer than the maximum of {MAX_STRING_LEN}",
                    s.len()
                )));
            }
            w.prefixed_bytes("", prefix, s.map(str::as_bytes))
        })
    }

    /// `nullable_string`: int16 length (-1 = null), then UTF-8.
    pub fn nullable_string(
        &mut self,
        name: &'static str,
        s: Option<&str>,
    ) -> Result<(), WireError> {
        self.prefixed_string(name, Prefix::Int16, s)
    }

    /// `string`: int16 length, then UTF-8.
    pub fn string(&mut self, name: &'static str, s: &str) -> Result<(), WireError> {
        self.nullable_string(name, Some(s))
    }

    /// `compact_nullable_string`: uvarint length + 1 (0 = null), then UTF-8.
    pub fn compact_nullable_string(
        &mut self,
        name: &'static str,
        s: Option<&str>,
    ) -> Result<(), WireError> {
        self.prefixed_string(name, Prefix::Compact, s)
    }

    /// `compact_string`.
    pub fn compact_string(&mut self, name: &'static str, s: &str) -> Result<(), WireError> {
        self.compact_nullable_string(name, Some(s))
    }

    /// `nullable_bytes`: int32 length (-1 = null), then the bytes.
    pub fn nullable_bytes(
        &mut self,
        name: &'static str,
        b: Option<&[u8]>,
    ) -> Result<(), WireError> {
        self.prefixed_bytes(name, Prefix::Int32, b)
    }

    /// `bytes`: int32 length, then the bytes.
    pub fn bytes(&mut self, name: &'static str, b: &[u8]) -> Result<(), WireError> {
        self.nullable_bytes(name, Some(b))
    }

    /// `compact_nullable_bytes`: uvarint length + 1 (0 = null), then the bytes.
    pub fn compact_nullable_bytes(
        &mut self,
        name: &'static str,
        b: Option<&[u8]>,
    ) -> Result<(), WireError> {
        self.prefixed_bytes(name, Prefix::Compact, b)
    }

    /// `compact_bytes`.
    pub fn compact_bytes(&mut self, name: &'static str, b: &[u8]) -> Result<(), WireError> {
        self.compact_nullable_bytes(name, Some(b))
    }

    /// The elements, each written by `f` with its index in the path.
    fn elements<I: Iterator>(
        &mut self,
        items: I,
        mut f: impl FnMut(&mut Self, I::Item) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        for (i, item) in items.enumerate() {
            self.path.push_index(i);
            let out = f(self, item);
            self.path.pop();
            out?;
        }
        Ok(())
    }

    fn prefixed_array<I: IntoIterator<IntoIter: ExactSizeIterator>>(
        &mut self,
        name: &'static str,
        prefix: Prefix,
        items: Option<I>,
        f: impl FnMut(&mut Self, I::Item) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        self.field(name, |w| {
            let items = items.map(IntoIterator::into_iter);
            w.len(prefix, items.as_ref().map(ExactSizeIterator::len))?;
            match items {
                None => Ok(()),
                Some(items) => w.elements(items, f),
            }
        })
    }

    /// Nullable array with an int32 length (-1 = null), elements written by `f`.
    pub fn nullable_array<I: IntoIterator<IntoIter: ExactSizeIterator>>(
        &mut self,
        name: &'static str,
        items: Option<I>,
        f: impl FnMut(&mut Self, I::Item) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        self.prefixed_array(name, Prefix::Int32, items, f)
    }

    /// Array with an int32 length.
    pub fn array<I: IntoIterator<IntoIter: ExactSizeIterator>>(
        &mut self,
        name: &'static str,
        items: I,
        f: impl FnMut(&mut Self, I::Item) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        self.nullable_array(name, Some(items), f)
    }

    /// Compact nullable array (uvarint `n + 1`, 0 = null), elements written by `f`.
    pub fn compact_nullable_array<I: IntoIterator<IntoIter: ExactSizeIterator>>(
        &mut self,
        name: &'static str,
        items: Option<I>,
        f: impl FnMut(&mut Self, I::Item) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        self.prefixed_array(name, Prefix::Compact, items, f)
    }

    /// Compact array.
    pub fn compact_array<I: IntoIterator<IntoIter: ExactSizeIterator>>(
        &mut self,
        name: &'static str,
        items: I,
        f: impl FnMut(&mut Self, I::Item) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        self.compact_nullable_array(name, Some(items), f)
    }

    /// Compact array of compact strings.
    pub fn compact_strings(
        &mut self,
        name: &'static str,
        items: &[String],
    ) -> Result<(), WireError> {
        self.compact_array(name, items, |w, s| w.compact_string("", s))
    }

    /// Compact array of [`Codec`] structs.
    pub fn compact_structs<T: Codec>(
        &mut self,
        name: &'static str,
        items: &[T],
        version: i16,
    ) -> Result<(), WireError> {
        self.compact_array(name, items, |w, item| item.encode(w, version))
    }

    /// Compact nullable array of [`Codec`] structs.
    pub fn compact_nullable_structs<T: Codec>(
        &mut self,
        name: &'static str,
        items: Option<&[T]>,
        version: i16,
    ) -> Result<(), WireError> {
        self.compact_nullable_array(name, items, |w, item| item.encode(w, version))
    }

    /// A non-nullable struct field (inline, no marker).
    pub fn struct_field<T: Codec>(
        &mut self,
        name: &'static str,
        item: &T,
        version: i16,
    ) -> Result<(), WireError> {
        self.field(name, |w| item.encode(w, version))
    }

    /// A nullable struct field: int8 -1 for null, 1 then the struct (written by `f`) otherwise.
    pub fn nullable_struct_with<T>(
        &mut self,
        name: &'static str,
        item: Option<&T>,
        f: impl FnOnce(&mut Self, &T) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
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

    /// A nullable [`Codec`] struct field.
    pub fn nullable_struct<T: Codec>(
        &mut self,
        name: &'static str,
        item: Option<&T>,
        version: i16,
    ) -> Result<(), WireError> {
        self.nullable_struct_with(name, item, |w, item| item.encode(w, version))
    }

    /// An empty tagged-field section.
    pub fn no_tagged_fields(&mut self) {
        self.uvarint(0);
    }

    /// A tagged-field section of a struct that knows no tags: the fields it kept.
    pub fn tagged_fields(&mut self, unknown: &[RawTaggedField]) -> Result<(), WireError> {
        self.tagged_fields_with(Vec::new(), unknown)
    }

    /// A tagged-field section: the struct's known tagged fields (`(tag, encoded value)`, only
    /// those to be written; see [`Writer::nested`]) merged in ascending tag order with the
    /// unknown ones it kept. Unknown fields need not be sorted; a tag present twice is an error.
    pub fn tagged_fields_with(
        &mut self,
        known: Vec<(u32, Vec<u8>)>,
        unknown: &[RawTaggedField],
    ) -> Result<(), WireError> {
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
                    return Err(WireError::DuplicateTaggedField {
                        path: w.path.render(),
                        tag: *a,
                    });
                }
            }
            let count = u32::try_from(all.len())
                .map_err(|_| w.invalid("too many tagged fields".to_owned()))?;
            w.uvarint(count);
            for (tag, data) in all {
                w.uvarint(tag);
                let size = u32::try_from(data.len())
                    .map_err(|_| w.invalid(format!("tagged field {tag} is too large")))?;
                w.uvarint(size);
                w.raw(data);
            }
            Ok(())
        })
    }
}
