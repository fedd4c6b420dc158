//! Kafka's 32-bit varints: unsigned LEB128 of at most 5 bytes, and zigzag for signed values.

/// The most bytes a 32-bit varint takes.
pub const MAX_LEN: usize = 5;

/// Why bytes are not a 32-bit varint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The input ends inside the varint.
    Truncated,
    /// More than 5 bytes, or a value above `u32::MAX`.
    Overlong,
}

/// Appends `v` as an unsigned varint.
pub fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        // Keeping the low 7 bits is the point of the encoding.
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The unsigned varint at the start of `buf` and the bytes it took.
pub fn get_uvarint(buf: &[u8]) -> Result<(u32, usize), VarintError> {
    let mut value: u32 = 0;
    for (i, &byte) in buf.iter().take(MAX_LEN).enumerate() {
        if i == MAX_LEN - 1 && byte > 0x0f {
            // A fifth byte may only carry the top 4 bits, and must end the varint.
            return Err(VarintError::Overlong);
        }
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(VarintError::Truncated)
}

/// The unsigned varint at the start of `buf` as the `kafka-protocol` crate reads it: at most five
/// bytes, whatever the fifth says, and the low 32 bits kept. Only for walking bodies that crate
/// decodes next (the server's pre-validation), which must agree with it byte for byte; everything
/// groupcoord decodes itself uses the strict [`get_uvarint`].
pub fn get_uvarint_lenient(buf: &[u8]) -> Result<(u32, usize), VarintError> {
    let mut value: u32 = 0;
    for (i, &byte) in buf.iter().take(MAX_LEN).enumerate() {
        value |= u32::from(byte & 0x7f).wrapping_shl(7 * i as u32);
        if byte & 0x80 == 0 || i == MAX_LEN - 1 {
            return Ok((value, i + 1));
        }
    }
    Err(VarintError::Truncated)
}

/// Zigzag: small magnitudes, positive or negative, get small unsigned codes.
pub fn zigzag(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

/// The inverse of [`zigzag`].
pub fn unzigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}
