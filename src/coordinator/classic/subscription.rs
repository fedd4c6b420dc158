//! The topics of a `consumer` protocol subscription (`ConsumerProtocolSubscription`), the only
//! part of a member's opaque metadata the coordinator reads (OffsetDelete's
//! GROUP_SUBSCRIBED_TO_TOPIC, §C6). Layout: int16 version, then int32 topic count and int16-length
//! strings; later fields are not needed. Bounded: a count larger than the bytes left fails.

use crate::util::map::BTreeSet;

use crate::wire::Reader;

/// The subscribed topics, or `None` when the bytes do not parse.
pub(crate) fn topics(bytes: &[u8]) -> Option<BTreeSet<String>> {
    let mut r = Reader::new(bytes, "ConsumerProtocolSubscription");
    if r.i16("Version").ok()? < 0 {
        return None;
    }
    let topics = r.array("Topics", |r| r.string("Topic")).ok()?;
    Some(topics.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_topics_and_rejects_garbage() {
        let b = [
            &[0, 1][..],
            &[0, 0, 0, 2],
            &[0, 1, b'a'],
            &[0, 2, b'b', b'c'],
            &[0xff; 4],
        ]
        .concat();
        assert_eq!(
            topics(&b),
            Some(["a".to_string(), "bc".to_string()].into_iter().collect())
        );
        assert_eq!(topics(&[0, 1, 0x7f, 0xff, 0xff, 0xff]), None);
        assert_eq!(topics(&[]), None);
        assert_eq!(topics(&[0, 0, 0, 0, 0, 1, 0, 5, b'x']), None);
    }
}
