//! Kafka's primitive types, bounds-checked: the reader never panics and never allocates more
//! than the bytes it was given justify; the writer never panics and remembers the first value
//! it could not represent (a string longer than Kafka allows) instead of failing mid-record.

use super::RecordCodecError;

/// Kafka's limit on every string field, flexible or not (`0x7fff` bytes, as its generated
/// readers and writers enforce).
pub(crate) const MAX_STRING_LEN: usize = 0x7fff;

/// A cursor over one key or value. `record` names the schema in every error.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    record: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], record: &'static str) -> Self {
        Reader {
            buf,
            pos: 0,
            record,
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn truncated(&self, field: &'static str) -> RecordCodecError {
        RecordCodecError::Truncated {
            record: self.record,
            field,
            offset: self.pos,
        }
    }

    pub(crate) fn invalid(
        &self,
        field: &'static str,
        reason: impl Into<String>,
    ) -> RecordCodecError {
        RecordCodecError::Invalid {
            record: self.record,
            field,
            reason: reason.into(),
        }
    }

    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], RecordCodecError> {
        if n > self.remaining() {
            return Err(self.truncated(field));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// `n` raw bytes.
    pub(crate) fn bytes(
        &mut self,
        n: usize,
        field: &'static str,
    ) -> Result<&'a [u8], RecordCodecError> {
        self.take(n, field)
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], RecordCodecError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, field)?);
        Ok(out)
    }

    pub(crate) fn i8(&mut self, field: &'static str) -> Result<i8, RecordCodecError> {
        Ok(i8::from_be_bytes(self.array(field)?))
    }

    pub(crate) fn i16(&mut self, field: &'static str) -> Result<i16, RecordCodecError> {
        Ok(i16::from_be_bytes(self.array(field)?))
    }

    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, RecordCodecError> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }

    pub(crate) fn i32(&mut self, field: &'static str) -> Result<i32, RecordCodecError> {
        Ok(i32::from_be_bytes(self.array(field)?))
    }

    pub(crate) fn i64(&mut self, field: &'static str) -> Result<i64, RecordCodecError> {
        Ok(i64::from_be_bytes(self.array(field)?))
    }

    /// Unsigned varint of at most 5 bytes that fits in 32 bits.
    pub(crate) fn uvarint(&mut self, field: &'static str) -> Result<u32, RecordCodecError> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let [b] = self.array::<1>(field)?;
            if i == 4 && b > 0x0f {
                return Err(self.invalid(field, "unsigned varint longer than 32 bits"));
            }
            value |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        // Unreachable: the fifth byte is at most 0x0f, so it ends the varint.
        Err(self.invalid(field, "unsigned varint longer than 5 bytes"))
    }

    fn utf8(&mut self, len: usize, field: &'static str) -> Result<String, RecordCodecError> {
        if len > MAX_STRING_LEN {
            return Err(self.invalid(
                field,
                format!("string length {len} exceeds {MAX_STRING_LEN}"),
            ));
        }
        let bytes = self.take(len, field)?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(self.invalid(field, format!("invalid UTF-8: {e}"))),
        }
    }

    /// Non-flexible nullable string: int16 length (-1 = null), then UTF-8 bytes.
    pub(crate) fn nullable_string(
        &mut self,
        field: &'static str,
    ) -> Result<Option<String>, RecordCodecError> {
        match self.i16(field)? {
            -1 => Ok(None),
            n if n < 0 => Err(self.invalid(field, format!("negative string length {n}"))),
            n => self.utf8(n as usize, field).map(Some),
        }
    }

    /// Non-flexible string that must not be null.
    pub(crate) fn string(&mut self, field: &'static str) -> Result<String, RecordCodecError> {
        self.nullable_string(field)?
            .ok_or_else(|| self.invalid(field, "null for a non-nullable string"))
    }

    /// Compact nullable string: unsigned varint length + 1 (0 = null), then UTF-8 bytes.
    pub(crate) fn compact_nullable_string(
        &mut self,
        field: &'static str,
    ) -> Result<Option<String>, RecordCodecError> {
        match self.uvarint(field)? {
            0 => Ok(None),
            n => self.utf8((n - 1) as usize, field).map(Some),
        }
    }

    /// Compact string that must not be null.
    pub(crate) fn compact_string(
        &mut self,
        field: &'static str,
    ) -> Result<String, RecordCodecError> {
        self.compact_nullable_string(field)?
            .ok_or_else(|| self.invalid(field, "null for a non-nullable string"))
    }

    /// Compact nullable array length (`None` = null). `min_element_len` is the fewest bytes one
    /// element can take: a count the remaining bytes cannot hold is rejected before any loop or
    /// allocation.
    pub(crate) fn compact_nullable_array_len(
        &mut self,
        field: &'static str,
        min_element_len: usize,
    ) -> Result<Option<usize>, RecordCodecError> {
        let n = self.uvarint(field)?;
        if n == 0 {
            return Ok(None);
        }
        let count = (n - 1) as usize;
        if count.saturating_mul(min_element_len.max(1)) > self.remaining() {
            return Err(self.truncated(field));
        }
        Ok(Some(count))
    }

    /// Compact array length that must not be null.
    pub(crate) fn compact_array_len(
        &mut self,
        field: &'static str,
        min_element_len: usize,
    ) -> Result<usize, RecordCodecError> {
        self.compact_nullable_array_len(field, min_element_len)?
            .ok_or_else(|| self.invalid(field, "null for a non-nullable array"))
    }

    /// A compact array of structs, each read by `element`.
    pub(crate) fn compact_array<T>(
        &mut self,
        field: &'static str,
        min_element_len: usize,
        mut element: impl FnMut(&mut Self) -> Result<T, RecordCodecError>,
    ) -> Result<Vec<T>, RecordCodecError> {
        let count = self.compact_array_len(field, min_element_len)?;
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            out.push(element(self)?);
        }
        Ok(out)
    }

    /// A compact nullable array of int32.
    pub(crate) fn compact_nullable_i32_array(
        &mut self,
        field: &'static str,
    ) -> Result<Option<Vec<i32>>, RecordCodecError> {
        let Some(count) = self.compact_nullable_array_len(field, 4)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            out.push(self.i32(field)?);
        }
        Ok(Some(out))
    }

    /// A compact array of int32 that must not be null.
    pub(crate) fn compact_i32_array(
        &mut self,
        field: &'static str,
    ) -> Result<Vec<i32>, RecordCodecError> {
        self.compact_nullable_i32_array(field)?
            .ok_or_else(|| self.invalid(field, "null for a non-nullable array"))
    }

    /// A compact array of int16 that must not be null.
    pub(crate) fn compact_i16_array(
        &mut self,
        field: &'static str,
    ) -> Result<Vec<i16>, RecordCodecError> {
        let count = self.compact_array_len(field, 2)?;
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            out.push(self.i16(field)?);
        }
        Ok(out)
    }

    /// A compact array of strings that must not be null.
    pub(crate) fn compact_string_array(
        &mut self,
        field: &'static str,
    ) -> Result<Vec<String>, RecordCodecError> {
        self.compact_array(field, 1, |r| r.compact_string(field))
    }

    /// The tagged-fields section of a flexible struct. `known` is called with each tag and a
    /// reader over exactly its payload and returns whether it knew the tag; a known tag must
    /// consume its whole payload. Unknown tags are skipped.
    pub(crate) fn tagged_fields(
        &mut self,
        field: &'static str,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, RecordCodecError>,
    ) -> Result<(), RecordCodecError> {
        let count = self.uvarint(field)? as usize;
        // Each tagged field takes at least two bytes (tag and size).
        if count.saturating_mul(2) > self.remaining() {
            return Err(self.truncated(field));
        }
        for _ in 0..count {
            let tag = self.uvarint(field)?;
            let size = self.uvarint(field)? as usize;
            let start = self.pos;
            let payload = self.take(size, field)?;
            let mut sub = Reader {
                buf: &self.buf[..start + payload.len()],
                pos: start,
                record: self.record,
            };
            if known(tag, &mut sub)? && sub.remaining() != 0 {
                return Err(self.invalid(
                    field,
                    format!("tagged field {tag} has {} bytes left over", sub.remaining()),
                ));
            }
        }
        Ok(())
    }

    /// A tagged-fields section whose tags are all ignored.
    pub(crate) fn skip_tagged_fields(
        &mut self,
        field: &'static str,
    ) -> Result<(), RecordCodecError> {
        self.tagged_fields(field, |_, _| Ok(false))
    }

    /// Every byte must have been read.
    pub(crate) fn finish(self, part: &'static str) -> Result<(), RecordCodecError> {
        match self.remaining() {
            0 => Ok(()),
            count => Err(RecordCodecError::TrailingBytes {
                record: self.record,
                part,
                count,
            }),
        }
    }
}

/// Bytes under construction. Values Kafka cannot represent are clamped and the first such
/// problem is kept, so an infallible encoder and a checked one share one code path.
pub(crate) struct Writer {
    buf: Vec<u8>,
    record: &'static str,
    error: Option<RecordCodecError>,
}

impl Writer {
    pub(crate) fn new(record: &'static str) -> Self {
        Writer {
            buf: Vec::new(),
            record,
            error: None,
        }
    }

    fn fail(&mut self, field: &'static str, reason: String) {
        if self.error.is_none() {
            self.error = Some(RecordCodecError::Unencodable {
                record: self.record,
                field,
                reason,
            });
        }
    }

    pub(crate) fn i8(&mut self, v: i8) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn uvarint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// The string, cut (at a character boundary) to Kafka's limit if it is longer.
    fn clamp<'s>(&mut self, field: &'static str, s: &'s str) -> &'s str {
        if s.len() <= MAX_STRING_LEN {
            return s;
        }
        self.fail(
            field,
            format!("string of {} bytes exceeds {MAX_STRING_LEN}", s.len()),
        );
        let mut end = MAX_STRING_LEN;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        &s[..end]
    }

    /// Non-flexible string: int16 length, then UTF-8 bytes.
    pub(crate) fn string(&mut self, field: &'static str, s: &str) {
        let s = self.clamp(field, s);
        self.i16(s.len() as i16);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// Compact string.
    pub(crate) fn compact_string(&mut self, field: &'static str, s: &str) {
        let s = self.clamp(field, s);
        self.uvarint(s.len() as u32 + 1);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// Compact nullable string.
    pub(crate) fn compact_nullable_string(&mut self, field: &'static str, s: Option<&str>) {
        match s {
            None => self.uvarint(0),
            Some(s) => self.compact_string(field, s),
        }
    }

    /// Compact array length (the caller writes the elements).
    pub(crate) fn compact_array_len(&mut self, field: &'static str, len: usize) {
        match u32::try_from(len).ok().and_then(|n| n.checked_add(1)) {
            Some(n) => self.uvarint(n),
            None => {
                self.fail(field, format!("array of {len} elements is too long"));
                self.uvarint(u32::MAX);
            }
        }
    }

    pub(crate) fn compact_i32_array(
        &mut self,
        field: &'static str,
        values: impl ExactSizeIterator<Item = i32>,
    ) {
        self.compact_array_len(field, values.len());
        for v in values {
            self.i32(v);
        }
    }

    pub(crate) fn compact_i16_array(&mut self, field: &'static str, values: &[i16]) {
        self.compact_array_len(field, values.len());
        for v in values {
            self.i16(*v);
        }
    }

    pub(crate) fn compact_string_array(&mut self, field: &'static str, values: &[String]) {
        self.compact_array_len(field, values.len());
        for v in values {
            self.compact_string(field, v);
        }
    }

    /// A tagged-fields section: `(tag, payload)` pairs in ascending tag order, as Kafka writes
    /// them. Each payload is a writer of the same record.
    pub(crate) fn tagged_fields(&mut self, fields: Vec<(u32, Writer)>) {
        self.uvarint(fields.len() as u32);
        for (tag, payload) in fields {
            if let Some(e) = payload.error {
                self.error.get_or_insert(e);
            }
            self.uvarint(tag);
            self.uvarint(payload.buf.len() as u32);
            self.buf.extend_from_slice(&payload.buf);
        }
    }

    /// An empty tagged-fields section.
    pub(crate) fn no_tagged_fields(&mut self) {
        self.uvarint(0);
    }

    /// The bytes, and the first value that had to be clamped, if any.
    pub(crate) fn finish(self) -> (Vec<u8>, Option<RecordCodecError>) {
        (self.buf, self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uvarint_round_trips_and_matches_kafka_bytes() {
        for (v, bytes) in [
            (0u32, &[0x00][..]),
            (1, &[0x01]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (300, &[0xac, 0x02]),
            (u32::MAX, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ] {
            let mut w = Writer::new("t");
            w.uvarint(v);
            assert_eq!(w.finish().0, bytes, "{v}");
            let mut r = Reader::new(bytes, "t");
            assert_eq!(r.uvarint("f").unwrap(), v);
            r.finish("value").unwrap();
        }
    }

    #[test]
    fn uvarint_rejects_overlong_and_truncated() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x10], "t");
        assert!(matches!(
            r.uvarint("f"),
            Err(RecordCodecError::Invalid { .. })
        ));
        let mut r = Reader::new(&[0x80, 0x80], "t");
        assert!(matches!(
            r.uvarint("f"),
            Err(RecordCodecError::Truncated { .. })
        ));
    }

    #[test]
    fn strings_reject_null_bad_utf8_and_hostile_lengths() {
        let mut r = Reader::new(&[0xff, 0xff], "t");
        assert!(matches!(
            r.string("f"),
            Err(RecordCodecError::Invalid { .. })
        ));
        let mut r = Reader::new(&[0x00], "t");
        assert!(matches!(
            r.compact_string("f"),
            Err(RecordCodecError::Invalid { .. })
        ));
        let mut r = Reader::new(&[0x00, 0x02, 0xc3, 0x28], "t");
        let e = r.string("f").unwrap_err();
        assert!(e.to_string().contains("UTF-8"), "{e}");
        let mut r = Reader::new(&[0x7f, 0xff, b'a'], "t");
        assert!(matches!(
            r.string("f"),
            Err(RecordCodecError::Truncated { .. })
        ));
        // Longer than Kafka's 0x7fff limit: rejected before looking for the bytes.
        let mut r = Reader::new(&[0x82, 0x80, 0x02], "t");
        assert!(matches!(
            r.compact_string("f"),
            Err(RecordCodecError::Invalid { .. })
        ));
    }

    #[test]
    fn hostile_array_counts_are_rejected_before_allocating() {
        // 2^32 - 2 elements announced, 0 bytes left.
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f], "t");
        assert!(matches!(
            r.compact_i32_array("f"),
            Err(RecordCodecError::Truncated { .. })
        ));
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f], "t");
        assert!(matches!(
            r.skip_tagged_fields("f"),
            Err(RecordCodecError::Truncated { .. })
        ));
    }

    #[test]
    fn known_tagged_field_must_consume_its_payload() {
        // One tagged field, tag 0, 5 bytes, of which the handler reads 4.
        let bytes = [0x01, 0x00, 0x05, 0, 0, 0, 1, 9];
        let mut r = Reader::new(&bytes, "t");
        let e = r
            .tagged_fields("f", |_, sub| {
                sub.i32("x")?;
                Ok(true)
            })
            .unwrap_err();
        assert!(matches!(e, RecordCodecError::Invalid { .. }), "{e}");
        // Unknown: skipped whole.
        let mut r = Reader::new(&bytes, "t");
        r.skip_tagged_fields("f").unwrap();
        r.finish("value").unwrap();
    }

    #[test]
    fn writer_clamps_long_strings_and_reports_it() {
        let long = "é".repeat(MAX_STRING_LEN); // 2 bytes each
        let mut w = Writer::new("t");
        w.string("f", &long);
        let (bytes, err) = w.finish();
        assert!(matches!(
            err,
            Some(RecordCodecError::Unencodable { field: "f", .. })
        ));
        let mut r = Reader::new(&bytes, "t");
        let s = r.string("f").unwrap();
        assert!(s.len() <= MAX_STRING_LEN && s.len() == MAX_STRING_LEN - 1);
        r.finish("value").unwrap();
    }
}
