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

/// The longest expression compiled, in bytes. Kafka sets no bound (RE2/J compiles whatever the
/// 32 KiB wire string holds); topic names have at most 249 characters, so this leaves room for
/// any real alternation while keeping peers from making the coordinator compile and store
/// arbitrarily large programs (docs/deviations.md).
pub(crate) const MAX_REGEX_LEN: usize = 4096;

fn invalid(regex: &str, description: &str) -> ApiError {
    ApiError::new(
        ErrorCode::INVALID_REGULAR_EXPRESSION,
        format!("SubscribedTopicRegex `{regex}` is not a valid regular expression: {description}."),
    )
}

/// Kafka's `throwIfRegularExpressionIsInvalid`: INVALID_REGULAR_EXPRESSION with its message.
/// An expression longer than [`MAX_REGEX_LEN`] is refused before compiling, with RE2's
/// description of an expression over its size limit.
pub(super) fn validate(regex: &str) -> Result<(), ApiError> {
    if regex.len() > MAX_REGEX_LEN {
        return Err(invalid(regex, "expression too large"));
    }
    regex_lite::Regex::new(regex)
        .map(|_| ())
        .map_err(|e| invalid(regex, &re2_description(&e.to_string())))
}

/// Whether wrapping `regex` in a group could change its meaning: a `)` outside any character
/// class that closes a group `regex` did not open (`a)|(b` would become `^(?:a)|(b)$`, which
/// compiles). Conservative: escapes and simple classes are skipped; a nested class or a `#`
/// (a verbose-mode comment) counts as a doubt.
fn may_escape_group(regex: &str) -> bool {
    let b = regex.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'#' => return true,
            b'[' => {
                i += 1;
                if b.get(i) == Some(&b'^') {
                    i += 1;
                }
                if b.get(i) == Some(&b']') {
                    i += 1;
                }
                while i < b.len() && b[i] != b']' {
                    match b[i] {
                        b'[' => return true,
                        b'\\' => i += 1,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' if depth == 0 => return true,
            b')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    false
}

/// `regex` compiled to match whole names (RE2/J's `matches()`), or `None` when `regex` alone
/// does not compile. One compilation, of the anchored form, unless [`may_escape_group`] has a
/// doubt: then `regex` alone is compiled first, so that `a)|(b` stays invalid.
fn whole_name_matcher(regex: &str) -> Option<regex_lite::Regex> {
    if regex.len() > MAX_REGEX_LEN
        || (may_escape_group(regex) && regex_lite::Regex::new(regex).is_err())
    {
        return None;
    }
    regex_lite::Regex::new(&format!("^(?:{regex})$")).ok()
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
        if let Some(re) = whole_name_matcher(regex) {
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

    /// Hostile input: an expression over the bound is refused before it is compiled, with
    /// Kafka's error and message shape, and resolves to nothing.
    #[test]
    fn long_expressions_are_refused_before_compiling() {
        let long = format!("t-{}", "a".repeat(MAX_REGEX_LEN));
        let e = validate(&long).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_REGULAR_EXPRESSION);
        assert_eq!(
            e.message.unwrap(),
            format!(
                "SubscribedTopicRegex `{long}` is not a valid regular expression: expression too large."
            )
        );
        let at_bound = "a".repeat(MAX_REGEX_LEN);
        assert!(validate(&at_bound).is_ok());
        let m = image(&[&at_bound]);
        assert_eq!(resolve([at_bound.as_str()], &m)[&at_bound].len(), 1);
        assert!(resolve([long.as_str()], &image(&[&long]))[&long].is_empty());
    }

    /// The one-compilation path agrees with compiling the expression alone first.
    #[test]
    fn whole_name_matcher_agrees_with_the_expression_alone() {
        let cases = [
            "a)|(b",
            "a)(b",
            ")",
            "(a)|b",
            "[)]|x",
            "[]a)]",
            r"\)|(b",
            r"a\(b",
            "[^]x)]",
            "[[:alpha:]]+",
            "(a|b)+c",
            "a{2}",
            "x|(y",
            "",
        ];
        for r in cases {
            let two_step = regex_lite::Regex::new(r).is_ok();
            assert_eq!(whole_name_matcher(r).is_some(), two_step, "{r}");
        }
        assert!(may_escape_group("a)|(b"));
        assert!(!may_escape_group("[)]|x"));
        assert!(!may_escape_group(r"\)|(b"));
        assert!(!may_escape_group("(a|b)+c"));
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
