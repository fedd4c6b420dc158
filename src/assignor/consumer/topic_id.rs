//! Topic ids as Kafka's `Uuid`: two signed 64-bit halves. The consumer assignors work on topic
//! ids, not names, and several of their choices depend on them: `Uuid.compareTo` (signed, most
//! significant half first) breaks ties between topics, and `Uuid.hashCode` places a topic in a
//! Java `HashSet`, whose iteration order decides which partitions are handed out first.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A topic id with Java `Uuid` ordering, hashing and text form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TopicId {
    /// The UUID's first 64 bits, as Java's `Uuid` stores them.
    pub most_significant_bits: i64,
    /// The UUID's last 64 bits.
    pub least_significant_bits: i64,
}

impl TopicId {
    /// The id made of Java's two halves.
    pub const fn new(most_significant_bits: i64, least_significant_bits: i64) -> Self {
        TopicId {
            most_significant_bits,
            least_significant_bits,
        }
    }

    /// A deterministic id for a topic that has no id of its own (the registry keeps names only).
    /// Any fixed function works for the assignors; this one avoids Kafka's two reserved ids
    /// (all zero, and the metadata topic's `0..01`). Note that the assignment of a group depends on
    /// the ids, so a caller that has Kafka's real ids must pass those to reproduce Kafka exactly.
    pub fn from_name(name: &str) -> Self {
        let mut digest = xxhash_rust::xxh3::xxh3_128(name.as_bytes());
        if digest <= 1 {
            digest += 2;
        }
        TopicId::new((digest >> 64) as i64, digest as i64)
    }

    /// `Uuid.hashCode()`: the two halves XORed, folded to 32 bits.
    pub fn java_hash_code(&self) -> i32 {
        let xor = self.most_significant_bits ^ self.least_significant_bits;
        ((xor >> 32) as i32) ^ (xor as i32)
    }

    fn bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.most_significant_bits.to_be_bytes());
        out[8..].copy_from_slice(&self.least_significant_bits.to_be_bytes());
        out
    }
}

impl Ord for TopicId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.most_significant_bits
            .cmp(&other.most_significant_bits)
            .then(
                self.least_significant_bits
                    .cmp(&other.least_significant_bits),
            )
    }
}

impl PartialOrd for TopicId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding (22 characters).
impl fmt::Display for TopicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let bytes = self.bytes();
        let mut text = String::with_capacity(22);
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            let symbols = chunk.len() + 1;
            for i in 0..symbols {
                text.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_compare_is_signed() {
        let negative = TopicId::new(-1, 0);
        let positive = TopicId::new(1, 0);
        assert!(negative < positive);
        assert!(TopicId::new(1, -5) < TopicId::new(1, 3));
    }

    #[test]
    fn text_form_is_url_safe_base64_without_padding() {
        // Uuid(0, 1) is Kafka's METADATA_TOPIC_ID, printed as "AAAAAAAAAAAAAAAAAAAAAQ".
        assert_eq!(TopicId::new(0, 1).to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(TopicId::new(-1, -1).to_string(), "_____________________w");
    }

    #[test]
    fn hash_code_folds_halves() {
        assert_eq!(TopicId::new(0, 1).java_hash_code(), 1);
        assert_eq!(TopicId::new(1 << 32, 0).java_hash_code(), 1);
        assert_eq!(TopicId::new(-1, 0).java_hash_code(), 0);
    }
}
