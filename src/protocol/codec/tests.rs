//! Unit tests of the wire primitives. Whole-message tests live in `tests/codec.rs`.

use super::CodecError;
use super::wire::{Reader, Writer};
use crate::protocol::messages::RawTaggedField;

fn varint_bytes(v: u32) -> Vec<u8> {
    let mut w = Writer::new("T");
    w.uvarint(v);
    w.into_bytes()
}

#[test]
fn uvarint_encodes_like_kafka() {
    assert_eq!(varint_bytes(0), [0x00]);
    assert_eq!(varint_bytes(1), [0x01]);
    assert_eq!(varint_bytes(127), [0x7f]);
    assert_eq!(varint_bytes(128), [0x80, 0x01]);
    assert_eq!(varint_bytes(300), [0xac, 0x02]);
    assert_eq!(varint_bytes(u32::MAX), [0xff, 0xff, 0xff, 0xff, 0x0f]);
}

#[test]
fn uvarint_round_trips_edges() {
    for v in [
        0,
        1,
        127,
        128,
        16_383,
        16_384,
        2_097_151,
        2_097_152,
        1 << 28,
        u32::MAX,
    ] {
        let bytes = varint_bytes(v);
        let mut r = Reader::new(&bytes, "T");
        assert_eq!(r.uvarint(), Ok(v));
        assert_eq!(r.remaining(), 0);
    }
}

#[test]
fn uvarint_rejects_overflow_and_overlong() {
    // Fifth byte above 0x0f would set bits beyond 32.
    let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x1f], "T");
    assert!(matches!(r.uvarint(), Err(CodecError::InvalidVarint { .. })));
    // Six-byte varint.
    let mut r = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], "T");
    assert!(matches!(r.uvarint(), Err(CodecError::InvalidVarint { .. })));
    // Truncated varint.
    let mut r = Reader::new(&[0x80, 0x80], "T");
    assert!(matches!(r.uvarint(), Err(CodecError::Truncated { .. })));
}

#[test]
fn compact_strings() {
    let mut w = Writer::new("T");
    w.string("A", "abc").unwrap();
    w.nullable_string("B", None).unwrap();
    w.nullable_string("C", Some("")).unwrap();
    let bytes = w.into_bytes();
    assert_eq!(bytes, [0x04, b'a', b'b', b'c', 0x00, 0x01]);
    let mut r = Reader::new(&bytes, "T");
    assert_eq!(r.string("A").unwrap(), "abc");
    assert_eq!(r.nullable_string("B").unwrap(), None);
    assert_eq!(r.nullable_string("C").unwrap(), Some(String::new()));
}

#[test]
fn null_in_non_nullable_string_is_an_error_naming_the_field() {
    let mut r = Reader::new(&[0x00], "Msg");
    let err = r.string("GroupId").unwrap_err();
    assert_eq!(
        err,
        CodecError::UnexpectedNull {
            path: "Msg.GroupId".into()
        }
    );
}

#[test]
fn string_length_limits() {
    let long = "x".repeat(0x8000);
    let mut w = Writer::new("T");
    assert!(matches!(
        w.string("S", &long),
        Err(CodecError::InvalidValue { .. })
    ));
    let ok = "x".repeat(0x7fff);
    let mut w = Writer::new("T");
    w.string("S", &ok).unwrap();
    let bytes = w.into_bytes();
    assert_eq!(Reader::new(&bytes, "T").string("S").unwrap(), ok);

    // A declared length of 0x8000 is rejected before looking at the bytes.
    let mut w = Writer::new("T");
    w.uvarint(0x8001);
    let bytes = w.into_bytes();
    assert!(matches!(
        Reader::new(&bytes, "T").string("S"),
        Err(CodecError::InvalidLength { length: 0x8000, .. })
    ));
}

#[test]
fn invalid_utf8_is_an_error() {
    let mut r = Reader::new(&[0x03, 0xc3, 0x28], "T");
    let err = r.string("S").unwrap_err();
    assert!(matches!(err, CodecError::InvalidUtf8 { ref path, .. } if path == "T.S"));
}

#[test]
fn legacy_nullable_string() {
    let mut w = Writer::new("T");
    w.legacy_nullable_string("A", Some("ab")).unwrap();
    w.legacy_nullable_string("B", None).unwrap();
    let bytes = w.into_bytes();
    assert_eq!(bytes, [0x00, 0x02, b'a', b'b', 0xff, 0xff]);
    let mut r = Reader::new(&bytes, "T");
    assert_eq!(r.legacy_nullable_string("A").unwrap(), Some("ab".into()));
    assert_eq!(r.legacy_nullable_string("B").unwrap(), None);
    let mut r = Reader::new(&[0xff, 0xfe], "T");
    assert!(matches!(
        r.legacy_nullable_string("A"),
        Err(CodecError::InvalidLength { length: -2, .. })
    ));
}

#[test]
fn array_paths_name_the_element() {
    // Two strings declared, the second truncated.
    let bytes = [0x03, 0x02, b'a', 0x05, b'b'];
    let mut r = Reader::new(&bytes, "Msg");
    let err = r
        .field("Topology", |r| r.array("SourceTopics", |r| r.string("")))
        .unwrap_err();
    assert_eq!(
        err,
        CodecError::Truncated {
            path: "Msg.Topology.SourceTopics[1]".into(),
            needed: 4,
            remaining: 1
        }
    );
    assert_eq!(
        err.to_string(),
        "truncated while reading Msg.Topology.SourceTopics[1]: needed 4 byte(s), 1 left"
    );
}

#[test]
fn hostile_array_length_is_rejected_without_allocating() {
    // Declares u32::MAX - 1 elements in a 5-byte buffer.
    let bytes = [0xff, 0xff, 0xff, 0xff, 0x0f];
    let mut r = Reader::new(&bytes, "T");
    let err = r.nullable_array("A", |r| r.i32("")).unwrap_err();
    assert!(matches!(
        err,
        CodecError::LengthExceedsRemaining {
            length: 4_294_967_294,
            remaining: 0,
            ..
        }
    ));
}

#[test]
fn nullable_struct_marker_follows_kafka() {
    let mut w = Writer::new("T");
    w.nullable_struct_with("S", None::<&i32>, |_, _| Ok(()))
        .unwrap();
    w.nullable_struct_with("S", Some(&7), |w, v| {
        w.i32(*v);
        Ok(())
    })
    .unwrap();
    assert_eq!(w.into_bytes(), [0xff, 0x01, 0, 0, 0, 7]);
    // Kafka reads any negative marker as null and anything else as present.
    let mut r = Reader::new(&[0x80, 0x00, 0, 0, 0, 9], "T");
    assert_eq!(r.nullable_struct_with("S", |r| r.i32("")).unwrap(), None);
    assert_eq!(r.nullable_struct_with("S", |r| r.i32("")).unwrap(), Some(9));
}

#[test]
fn tagged_fields_known_and_unknown_are_merged_in_tag_order() {
    let unknown = vec![
        RawTaggedField {
            tag: 7,
            data: vec![0xaa],
        },
        RawTaggedField {
            tag: 0,
            data: vec![],
        },
    ];
    let mut w = Writer::new("T");
    w.tagged_fields_with(vec![(3, vec![0x01, 0x02])], &unknown)
        .unwrap();
    let bytes = w.into_bytes();
    assert_eq!(
        bytes,
        [0x03, 0x00, 0x00, 0x03, 0x02, 0x01, 0x02, 0x07, 0x01, 0xaa]
    );

    // Reading with tag 3 known: it is handed to the callback, the rest is kept in order.
    let mut seen = Vec::new();
    let mut r = Reader::new(&bytes, "T");
    let kept = r
        .tagged_fields_with(|_, tag, data| {
            if tag == 3 {
                seen.push(data.to_vec());
                Ok(true)
            } else {
                Ok(false)
            }
        })
        .unwrap();
    assert_eq!(seen, vec![vec![0x01, 0x02]]);
    assert_eq!(
        kept.iter().map(|f| f.tag).collect::<Vec<_>>(),
        vec![0, 7],
        "unknown fields kept in wire order"
    );
}

#[test]
fn tagged_fields_collision_with_known_tag_is_an_error() {
    let unknown = vec![RawTaggedField {
        tag: 3,
        data: vec![],
    }];
    let mut w = Writer::new("T");
    let err = w
        .tagged_fields_with(vec![(3, vec![])], &unknown)
        .unwrap_err();
    assert!(matches!(
        err,
        CodecError::DuplicateTaggedField { tag: 3, .. }
    ));
}

#[test]
fn tagged_fields_must_ascend_on_the_wire() {
    let dup = [0x02, 0x01, 0x00, 0x01, 0x00];
    assert!(matches!(
        Reader::new(&dup, "T").tagged_fields(),
        Err(CodecError::DuplicateTaggedField { tag: 1, .. })
    ));
    let dec = [0x02, 0x02, 0x00, 0x01, 0x00];
    assert!(matches!(
        Reader::new(&dec, "T").tagged_fields(),
        Err(CodecError::TaggedFieldsOutOfOrder {
            previous: 2,
            tag: 1,
            ..
        })
    ));
    // Declared size beyond the input.
    let big = [0x01, 0x00, 0x7f];
    assert!(matches!(
        Reader::new(&big, "T").tagged_fields(),
        Err(CodecError::Truncated { .. })
    ));
    // Declared count beyond the input.
    let many = [0x7f, 0x00];
    assert!(matches!(
        Reader::new(&many, "T").tagged_fields(),
        Err(CodecError::LengthExceedsRemaining { .. })
    ));
}

#[test]
fn bool_reads_any_non_zero_as_true() {
    let mut r = Reader::new(&[0x00, 0x01, 0x02], "T");
    assert!(!r.bool("B").unwrap());
    assert!(r.bool("B").unwrap());
    assert!(r.bool("B").unwrap());
}

#[test]
fn consumed_since_returns_the_bytes_read() {
    let bytes = [1, 2, 3, 4, 5];
    let mut r = Reader::new(&bytes, "T");
    r.i8("").unwrap();
    let mark = r.mark();
    r.i16("").unwrap();
    assert_eq!(r.consumed_since(mark), [2, 3]);
}
