//! Kafka's rules for topic names (`org.apache.kafka.common.internals.Topic`), shared by the
//! coordinator's topology checks and the server's topic registry.

/// Longest legal topic name, in bytes.
pub const MAX_NAME_LEN: usize = 249;

/// Kafka's internal topics (`Topic.INTERNAL_TOPICS`): never a Streams topology's topic, and
/// reported as internal by Metadata.
pub const INTERNAL_TOPICS: &[&str] = &[
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

/// Whether `name` is one of [`INTERNAL_TOPICS`].
pub fn is_internal(name: &str) -> bool {
    INTERNAL_TOPICS.contains(&name)
}

/// Kafka's topic name rule (`Topic.validate`): 1 to 249 ASCII letters, digits, `.`, `_` or `-`,
/// and neither `.` nor `..`.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_kafka() {
        for ok in ["a", "A-b_c.9", "..a", &"x".repeat(MAX_NAME_LEN)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "a b",
            "é",
            "a/b",
            &"x".repeat(MAX_NAME_LEN + 1),
        ] {
            assert!(!is_valid_name(bad), "{bad}");
        }
        assert!(is_internal("__consumer_offsets"));
        assert!(!is_internal("consumer_offsets"));
    }
}
