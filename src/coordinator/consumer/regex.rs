//! Regular-expression subscriptions (`SubscribedTopicRegex`, docs/consumer-protocol.md §K3.9):
//! validation with Kafka's error message and resolution against the topic registry.
//!
//! Kafka compiles expressions with RE2/J; groupcoord with `regex-lite`, the same RE2 family
//! (linear time, no backreferences or look-around) without Unicode tables, which keeps the wasm
//! module small. A topic matches when the whole name matches (RE2/J's `matches()`).
//! Unicode classes (`\p{..}`) are refused here where RE2/J accepts them (docs/deviations.md).

use crate::util::map::{BTreeMap, BTreeSet};

use crate::error::{ApiError, ErrorCode};
use crate::topology::MetadataImage;

/// RE2/J's description of a syntax error (Go's `regexp/syntax` error codes) for the error
/// `regex-lite` reports, so that the message reads as Kafka's.
fn re2_description(lite: &str) -> String {
    const MAP: &[(&str, &str)] = &[
        ("character class has no closing", "missing closing ]"),
        ("unclosed character class", "missing closing ]"),
        ("begins with literal ']'", "missing closing ]"),
        (
            "invalid range in character class",
            "invalid character class range",
        ),
        ("ranges must start and end", "invalid character class range"),
        ("group without closing ')'", "missing closing )"),
        ("expected closing ')'", "missing closing )"),
        ("closing ')' without matching", "unexpected )"),
        (
            "repetition operator must be applied",
            "missing argument to repetition operator",
        ),
        ("min bigger than its max", "invalid repeat count"),
        ("counted repetition", "invalid repeat count"),
        (
            "end of pattern before it finished",
            "trailing backslash at end of expression",
        ),
        ("escape", "invalid escape sequence"),
        ("too much nesting", "expression nests too deeply"),
        ("group name", "invalid named capture"),
        ("capture group name", "invalid named capture"),
        ("POSIX character class", "invalid character class range"),
        ("Unicode character classes", "invalid character class range"),
    ];
    MAP.iter()
        .find(|(needle, _)| lite.contains(needle))
        .map_or_else(
            || "invalid or unsupported Perl syntax".to_string(),
            |(_, re2)| re2.to_string(),
        )
}

/// Kafka's `throwIfRegularExpressionIsInvalid`: INVALID_REGULAR_EXPRESSION with its message.
pub(super) fn validate(regex: &str) -> Result<(), ApiError> {
    regex_lite::Regex::new(regex).map(|_| ()).map_err(|e| {
        ApiError::new(
            ErrorCode::INVALID_REGULAR_EXPRESSION,
            format!(
                "SubscribedTopicRegex `{regex}` is not a valid regular expression: {}.",
                re2_description(&e.to_string())
            ),
        )
    })
}

/// The topics each expression matches in full (Kafka's `TopicRegexResolver`); an expression
/// that does not compile resolves to no topic.
pub(super) fn resolve<'a>(
    regexes: impl IntoIterator<Item = &'a str>,
    metadata: &MetadataImage,
) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for regex in regexes {
        let mut topics = BTreeSet::new();
        // Anchored only after the expression alone compiled: `a)|(b` must stay invalid.
        let anchored = regex_lite::Regex::new(regex)
            .ok()
            .and_then(|_| regex_lite::Regex::new(&format!("^(?:{regex})$")).ok());
        if let Some(re) = anchored {
            topics.extend(metadata.topics.keys().filter(|t| re.is_match(t)).cloned());
        }
        out.insert(regex.to_string(), topics.into_iter().collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(names: &[&str]) -> MetadataImage {
        MetadataImage {
            topics: names.iter().map(|n| (n.to_string(), 1)).collect(),
        }
    }

    #[test]
    fn invalid_expressions_get_kafkas_message() {
        let e = validate("ktopic-[").unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_REGULAR_EXPRESSION);
        assert_eq!(
            e.message.as_deref(),
            Some(
                "SubscribedTopicRegex `ktopic-[` is not a valid regular expression: missing closing ]."
            )
        );
        assert!(
            validate("a(b")
                .unwrap_err()
                .message
                .unwrap()
                .ends_with("missing closing )."),
        );
        assert!(
            validate("a)b")
                .unwrap_err()
                .message
                .unwrap()
                .ends_with("unexpected )."),
        );
        assert!(
            validate("*a")
                .unwrap_err()
                .message
                .unwrap()
                .ends_with("missing argument to repetition operator."),
        );
        assert!(validate("ktopic-[ab]").is_ok());
        assert!(validate("").is_ok());
    }

    /// docs/deviations.md row 19: RE2/J accepts Unicode classes, regex-lite has no tables for them.
    #[test]
    fn unicode_classes_are_refused() {
        let e = validate(r"topic-\p{Greek}+").unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_REGULAR_EXPRESSION);
        assert!(validate(r"topic-\pL").is_err());
    }

    #[test]
    fn resolution_matches_whole_names() {
        let m = image(&["ktopic-a", "ktopic-b", "ktopic-c", "xktopic-a", "ktopic-ab"]);
        let r = resolve(["ktopic-[ab]", "ktopic-.*", "a)|(b", "ktopic"], &m);
        assert_eq!(r["ktopic-[ab]"], ["ktopic-a", "ktopic-b"]);
        assert_eq!(
            r["ktopic-.*"],
            ["ktopic-a", "ktopic-ab", "ktopic-b", "ktopic-c"]
        );
        assert!(r["a)|(b"].is_empty());
        assert!(r["ktopic"].is_empty());
    }
}
