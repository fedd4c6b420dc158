//! Where a group lives: its coordinator partition, as Kafka places groups on the partitions of
//! `__consumer_offsets` (`Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`, with
//! Java's `String.hashCode`), and the owner (shard) that holds that partition. See
//! docs/sharding.md.

/// Java's `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over the UTF-16 code units,
/// wrapping in 32 bits.
pub(crate) fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// Kafka's `Utils.abs`: the absolute value, with `i32::MIN` mapped to 0 (not to itself).
fn kafka_abs(n: i32) -> i32 {
    if n == i32::MIN { 0 } else { n.abs() }
}

/// The coordinator partition of `group_id` among `partitions` (`offsets.topic.num.partitions`,
/// at least 1).
pub(crate) fn coordinator_partition(group_id: &str, partitions: u32) -> u32 {
    kafka_abs(java_string_hash(group_id)) as u32 % partitions.max(1)
}

/// The owner of a coordinator partition: partitions are dealt round-robin over the owners, so
/// each owner holds whole partitions and every group of a partition stays together.
pub(crate) fn owner_of_partition(partition: u32, owners: usize) -> usize {
    partition as usize % owners.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values computed with Java's `String.hashCode()`.
    #[test]
    fn hash_is_javas() {
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("foo"), 101_574);
        assert_eq!(java_string_hash("hello world"), 1_794_106_052);
        // Wraps: "polygenelubricants".hashCode() == Integer.MIN_VALUE.
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        // Non-ASCII hashes UTF-16 code units: 'é' is one unit (233), '😀' two (a surrogate pair).
        assert_eq!(java_string_hash("é"), 233);
        assert_eq!(java_string_hash("😀"), 1_772_899);
    }

    #[test]
    fn placement_is_kafkas() {
        // Utils.abs(Integer.MIN_VALUE) is 0, so this group is on partition 0.
        assert_eq!(coordinator_partition("polygenelubricants", 50), 0);
        assert_eq!(coordinator_partition("foo", 50), 101_574 % 50);
        // Negative hashes (values and partitions computed with Java).
        assert_eq!(java_string_hash("group-with-a-negative-hash"), -127_349_055);
        assert_eq!(coordinator_partition("group-with-a-negative-hash", 50), 5);
        assert_eq!(coordinator_partition("replay-group-7", 50), 25);
        assert_eq!(coordinator_partition("😀", 50), 49);
        assert_eq!(
            coordinator_partition("anything", 0),
            0,
            "no partitions: partition 0"
        );
    }

    #[test]
    fn owners_hold_whole_partitions() {
        assert_eq!(owner_of_partition(0, 2), 0);
        assert_eq!(owner_of_partition(1, 2), 1);
        assert_eq!(owner_of_partition(49, 2), 1);
        assert_eq!(owner_of_partition(7, 1), 0);
        assert_eq!(owner_of_partition(7, 0), 0);
    }
}
