//! The bounds-checked reading half of the wire layer.

use super::path::{self, Path, Prefix};
use super::varint::{self, VarintError};
use super::{Codec, MAX_STRING_LEN, RawTaggedField, UnknownTaggedFields, WireError};

/// Upper bound on the capacity reserved up front for a decoded array, whatever it declares.
const MAX_PREALLOC: usize = 256;

/// Path segment of a struct's tagged-field section.
const TAGGED_FIELDS: &str = "TaggedFields";

/// A cursor over bytes from a peer or a log. Every read is checked before it touches the
/// buffer; every error names the field path (`root.Field[i].Inner`).
///
/// Each read takes the name of the field it reads, appended to the path for its errors (an
/// empty name appends nothing: array elements, values whose name the caller already pushed).
pub struct Reader<'a> {
    buf: &'a [u8],
    path: Path,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`; `root` (a message or record name) starts every error path.
    pub fn new(buf: &'a [u8], root: &'static str) -> Self {
        Reader {
            buf,
            path: Path::new(root),
        }
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// The unconsumed rest of the input, to be handed to [`Reader::consumed_since`] later.
    pub fn mark(&self) -> &'a [u8] {
        self.buf
    }

    /// The bytes consumed since `mark` was taken.
    pub fn consumed_since(&self, mark: &'a [u8]) -> &'a [u8] {
        let consumed = mark.len().saturating_sub(self.buf.len());
        mark.get(..consumed).unwrap_or_default()
    }

    /// Every byte must have been read: [`WireError::TrailingBytes`] otherwise.
    pub fn finish(self) -> Result<(), WireError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(WireError::TrailingBytes {
                message: self.path.root(),
                count,
            }),
        }
    }

    /// Runs `f` with `name` appended to the path (nothing is appended for an empty name).
    pub fn field<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T, WireError>,
    ) -> Result<T, WireError> {
        path::in_field(self, |r| &mut r.path, name, f)
    }

    /// The current path with `name` appended, for a caller's own errors.
    pub fn path_of(&self, name: &'static str) -> String {
        self.path.render_with(name)
    }

    /// [`WireError::UnexpectedNull`] at the current path.
    pub fn unexpected_null(&self) -> WireError {
        WireError::UnexpectedNull {
            path: self.path.render(),
        }
    }

    fn truncated(&self, needed: usize) -> WireError {
        WireError::Truncated {
            path: self.path.render(),
            needed,
            remaining: self.buf.len(),
        }
    }

    fn invalid_length(&self, length: i64) -> WireError {
        WireError::InvalidLength {
            path: self.path.render(),
            length,
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.buf.len() < n {
            return Err(self.truncated(n));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    fn fixed<const N: usize>(&mut self, name: &'static str) -> Result<[u8; N], WireError> {
        self.field(name, |r| {
            let mut out = [0u8; N];
            out.copy_from_slice(r.take(N)?);
            Ok(out)
        })
    }

    /// `int8`.
    pub fn i8(&mut self, name: &'static str) -> Result<i8, WireError> {
        self.fixed(name).map(i8::from_be_bytes)
    }

    /// `int16`, big-endian.
    pub fn i16(&mut self, name: &'static str) -> Result<i16, WireError> {
        self.fixed(name).map(i16::from_be_bytes)
    }

    /// `uint16`, big-endian.
    pub fn u16(&mut self, name: &'static str) -> Result<u16, WireError> {
        self.fixed(name).map(u16::from_be_bytes)
    }

    /// `int32`, big-endian.
    pub fn i32(&mut self, name: &'static str) -> Result<i32, WireError> {
        self.fixed(name).map(i32::from_be_bytes)
    }

    /// `uint32`, big-endian.
    pub fn u32(&mut self, name: &'static str) -> Result<u32, WireError> {
        self.fixed(name).map(u32::from_be_bytes)
    }

    /// `int64`, big-endian.
    pub fn i64(&mut self, name: &'static str) -> Result<i64, WireError> {
        self.fixed(name).map(i64::from_be_bytes)
    }

    /// `bool`: Kafka reads any non-zero byte as `true`.
    pub fn bool(&mut self, name: &'static str) -> Result<bool, WireError> {
        Ok(self.i8(name)? != 0)
    }

    /// `uuid`: 16 raw bytes.
    pub fn uuid(&mut self, name: &'static str) -> Result<[u8; 16], WireError> {
        self.fixed(name)
    }

    /// Unsigned varint of at most 5 bytes whose value fits 32 bits.
    pub fn uvarint(&mut self, name: &'static str) -> Result<u32, WireError> {
        self.field(name, |r| match varint::get_uvarint(r.buf) {
            Ok((value, len)) => {
                r.buf = &r.buf[len..];
                Ok(value)
            }
            Err(VarintError::Truncated) => {
                // The varint runs to the end of the input: it needed one byte more.
                r.buf = &[];
                Err(r.truncated(1))
            }
            Err(VarintError::Overlong) => Err(WireError::InvalidVarint {
                path: r.path.render(),
            }),
        })
    }

    /// `varint`: a zigzag-encoded signed 32-bit value.
    pub fn varint(&mut self, name: &'static str) -> Result<i32, WireError> {
        self.uvarint(name).map(varint::unzigzag)
    }

    /// `n` raw bytes (no length prefix).
    pub fn raw(&mut self, n: usize, name: &'static str) -> Result<&'a [u8], WireError> {
        self.field(name, |r| r.take(n))
    }

    /// A length of the given prefix; `None` for null. A negative classic length other than -1
    /// is an error.
    fn len(&mut self, prefix: Prefix) -> Result<Option<usize>, WireError> {
        let len = match prefix {
            Prefix::Int16 => i64::from(self.i16("")?),
            Prefix::Int32 => i64::from(self.i32("")?),
            // uvarint `n + 1`, 0 = null.
            Prefix::Compact => i64::from(self.uvarint("")?) - 1,
        };
        match len {
            -1 => Ok(None),
            n => usize::try_from(n)
                .map(Some)
                .map_err(|_| self.invalid_length(n)),
        }
    }

    /// A value read by `read` (under `name`) that must not be null.
    fn required<T>(
        &mut self,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<Option<T>, WireError>,
    ) -> Result<T, WireError> {
        self.field(name, |r| {
            let value = read(r)?;
            value.ok_or_else(|| r.unexpected_null())
        })
    }

    fn prefixed_bytes(
        &mut self,
        name: &'static str,
        prefix: Prefix,
    ) -> Result<Option<&'a [u8]>, WireError> {
        self.field(name, |r| match r.len(prefix)? {
            None => Ok(None),
            Some(len) => r.take(len).map(Some),
        })
    }

    fn prefixed_string(
        &mut self,
        name: &'static str,
        prefix: Prefix,
    ) -> Result<Option<String>, WireError> {
        self.field(name, |r| {
            let Some(len) = r.len(prefix)? else {
                return Ok(None);
            };
            if len > MAX_STRING_LEN {
                // Rejected before looking for the bytes.
                return Err(r.invalid_length(len as i64));
            }
            let bytes = r.take(len)?;
            std::str::from_utf8(bytes)
                .map(|s| Some(s.to_owned()))
                .map_err(|e| WireError::InvalidUtf8 {
                    path: r.path.render(),
                    detail: e.to_string(),
                })
        })
    }

    /// `nullable_string`: int16 length (-1 = null), then UTF-8.
    pub fn nullable_string(&mut self, name: &'static str) -> Result<Option<String>, WireError> {
        self.prefixed_string(name, Prefix::Int16)
    }

    /// `string`: as [`Reader::nullable_string`], null not allowed.
    pub fn string(&mut self, name: &'static str) -> Result<String, WireError> {
        self.required(name, |r| r.nullable_string(""))
    }

    /// `compact_nullable_string`: uvarint length + 1 (0 = null), then UTF-8.
    pub fn compact_nullable_string(
        &mut self,
        name: &'static str,
    ) -> Result<Option<String>, WireError> {
        self.prefixed_string(name, Prefix::Compact)
    }

    /// `compact_string`: as [`Reader::compact_nullable_string`], null not allowed.
    pub fn compact_string(&mut self, name: &'static str) -> Result<String, WireError> {
        self.required(name, |r| r.compact_nullable_string(""))
    }

    /// `nullable_bytes`: int32 length (-1 = null), then the bytes.
    pub fn nullable_bytes(&mut self, name: &'static str) -> Result<Option<&'a [u8]>, WireError> {
        self.prefixed_bytes(name, Prefix::Int32)
    }

    /// `bytes`: as [`Reader::nullable_bytes`], null not allowed.
    pub fn bytes(&mut self, name: &'static str) -> Result<&'a [u8], WireError> {
        self.required(name, |r| r.nullable_bytes(""))
    }

    /// `compact_nullable_bytes`: uvarint length + 1 (0 = null), then the bytes.
    pub fn compact_nullable_bytes(
        &mut self,
        name: &'static str,
    ) -> Result<Option<&'a [u8]>, WireError> {
        self.prefixed_bytes(name, Prefix::Compact)
    }

    /// `compact_bytes`: as [`Reader::compact_nullable_bytes`], null not allowed.
    pub fn compact_bytes(&mut self, name: &'static str) -> Result<&'a [u8], WireError> {
        self.required(name, |r| r.compact_nullable_bytes(""))
    }

    /// An element count of the given prefix that the remaining bytes can hold (every element
    /// takes at least one byte): a larger one is rejected before any loop or allocation.
    fn array_count(
        &mut self,
        name: &'static str,
        prefix: Prefix,
    ) -> Result<Option<usize>, WireError> {
        self.field(name, |r| {
            let Some(count) = r.len(prefix)? else {
                return Ok(None);
            };
            if count > r.remaining() {
                return Err(WireError::LengthExceedsRemaining {
                    path: r.path.render(),
                    length: count,
                    remaining: r.remaining(),
                });
            }
            Ok(Some(count))
        })
    }

    /// Element count of a nullable array with an int32 length (-1 = null).
    pub fn nullable_array_len(&mut self, name: &'static str) -> Result<Option<usize>, WireError> {
        self.array_count(name, Prefix::Int32)
    }

    /// Element count of an array with an int32 length, null not allowed.
    pub fn array_len(&mut self, name: &'static str) -> Result<usize, WireError> {
        self.required(name, |r| r.nullable_array_len(""))
    }

    /// Element count of a compact nullable array (uvarint `n + 1`, 0 = null).
    pub fn compact_nullable_array_len(
        &mut self,
        name: &'static str,
    ) -> Result<Option<usize>, WireError> {
        self.array_count(name, Prefix::Compact)
    }

    /// Element count of a compact array, null not allowed.
    pub fn compact_array_len(&mut self, name: &'static str) -> Result<usize, WireError> {
        self.required(name, |r| r.compact_nullable_array_len(""))
    }

    /// `count` elements read by `f`, each with its index in the path.
    fn elements<T>(
        &mut self,
        count: usize,
        mut f: impl FnMut(&mut Self) -> Result<T, WireError>,
    ) -> Result<Vec<T>, WireError> {
        let mut out = Vec::with_capacity(count.min(MAX_PREALLOC));
        for i in 0..count {
            self.path.push_index(i);
            let item = f(self);
            self.path.pop();
            out.push(item?);
        }
        Ok(out)
    }

    fn prefixed_array<T>(
        &mut self,
        name: &'static str,
        prefix: Prefix,
        f: impl FnMut(&mut Self) -> Result<T, WireError>,
    ) -> Result<Option<Vec<T>>, WireError> {
        self.field(name, |r| match r.array_count("", prefix)? {
            None => Ok(None),
            Some(n) => r.elements(n, f).map(Some),
        })
    }

    /// Nullable array with an int32 length, elements read by `f`.
    pub fn nullable_array<T>(
        &mut self,
        name: &'static str,
        f: impl FnMut(&mut Self) -> Result<T, WireError>,
    ) -> Result<Option<Vec<T>>, WireError> {
        self.prefixed_array(name, Prefix::Int32, f)
    }

    /// Array with an int32 length, null not allowed.
    pub fn array<T>(
        &mut self,
        name: &'static str,
        f: impl FnMut(&mut Self) -> Result<T, WireError>,
    ) -> Result<Vec<T>, WireError> {
        self.required(name, |r| r.nullable_array("", f))
    }

    /// Compact nullable array, elements read by `f`.
    pub fn compact_nullable_array<T>(
        &mut self,
        name: &'static str,
        f: impl FnMut(&mut Self) -> Result<T, WireError>,
    ) -> Result<Option<Vec<T>>, WireError> {
        self.prefixed_array(name, Prefix::Compact, f)
    }

    /// Compact array, null not allowed.
    pub fn compact_array<T>(
        &mut self,
        name: &'static str,
        f: impl FnMut(&mut Self) -> Result<T, WireError>,
    ) -> Result<Vec<T>, WireError> {
        self.required(name, |r| r.compact_nullable_array("", f))
    }

    /// Compact array of [`Codec`] structs.
    pub fn compact_structs<T: Codec>(
        &mut self,
        name: &'static str,
        version: i16,
    ) -> Result<Vec<T>, WireError> {
        self.compact_array(name, |r| T::decode(r, version))
    }

    /// Compact nullable array of [`Codec`] structs.
    pub fn compact_nullable_structs<T: Codec>(
        &mut self,
        name: &'static str,
        version: i16,
    ) -> Result<Option<Vec<T>>, WireError> {
        self.compact_nullable_array(name, |r| T::decode(r, version))
    }

    /// A non-nullable struct field (inline, no marker).
    pub fn struct_field<T: Codec>(
        &mut self,
        name: &'static str,
        version: i16,
    ) -> Result<T, WireError> {
        self.field(name, |r| T::decode(r, version))
    }

    /// A nullable struct field: an int8 marker (negative = null, as Kafka reads it), then the
    /// struct, read by `f`.
    pub fn nullable_struct_with<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T, WireError>,
    ) -> Result<Option<T>, WireError> {
        self.field(name, |r| {
            if r.i8("")? < 0 {
                Ok(None)
            } else {
                f(r).map(Some)
            }
        })
    }

    /// A nullable [`Codec`] struct field.
    pub fn nullable_struct<T: Codec>(
        &mut self,
        name: &'static str,
        version: i16,
    ) -> Result<Option<T>, WireError> {
        self.nullable_struct_with(name, |r| T::decode(r, version))
    }

    /// A tagged-field section of a struct that knows no tags: every field is kept.
    pub fn tagged_fields(&mut self) -> Result<UnknownTaggedFields, WireError> {
        self.tagged_fields_with(|_, _| Ok(false))
    }

    /// A tagged-field section whose fields are all dropped (still checked).
    pub fn skip_tagged_fields(&mut self) -> Result<(), WireError> {
        self.tagged_fields().map(drop)
    }

    /// A tagged-field section. `known(tag, payload)` reads a tag the struct knows from a reader
    /// over exactly its payload and returns `true`; the value must take the whole payload. It
    /// returns `false` for a tag it does not know, which is kept verbatim. Tags must strictly
    /// ascend.
    pub fn tagged_fields_with(
        &mut self,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, WireError>,
    ) -> Result<UnknownTaggedFields, WireError> {
        self.field(TAGGED_FIELDS, |r| {
            let count = r.uvarint("")? as usize;
            // Each field takes at least a tag byte and a size byte.
            if count > r.remaining() / 2 {
                return Err(WireError::LengthExceedsRemaining {
                    path: r.path.render(),
                    length: count,
                    remaining: r.remaining(),
                });
            }
            let mut unknown = Vec::new();
            let mut previous: Option<u32> = None;
            for _ in 0..count {
                let tag = r.uvarint("")?;
                if let Some(previous) = previous {
                    if tag == previous {
                        return Err(WireError::DuplicateTaggedField {
                            path: r.path.render(),
                            tag,
                        });
                    }
                    if tag < previous {
                        return Err(WireError::TaggedFieldsOutOfOrder {
                            path: r.path.render(),
                            previous,
                            tag,
                        });
                    }
                }
                previous = Some(tag);
                let size = r.uvarint("")? as usize;
                let data = r.take(size)?;
                let mut payload = Reader {
                    buf: data,
                    path: r.path.clone(),
                };
                if !known(tag, &mut payload)? {
                    unknown.push(RawTaggedField {
                        tag,
                        data: data.to_vec(),
                    });
                } else if payload.remaining() != 0 {
                    return Err(WireError::TaggedFieldSize {
                        path: r.path.render(),
                        tag,
                        size,
                        used: size - payload.remaining(),
                    });
                }
            }
            Ok(unknown)
        })
    }
}
