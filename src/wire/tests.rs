//! Unit tests of the wire primitives. Whole-message tests live in `tests/codec.rs` and
//! `tests/records_codec.rs`.

use super::varint::{self, VarintError};
use super::{MAX_STRING_LEN, RawTaggedField, Reader, WireError, Writer};

fn written(f: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new("T");
    f(&mut w);
    w.into_bytes()
}

// ---------------------------------------------------------------------------------------------
// Varints
// ---------------------------------------------------------------------------------------------

#[test]
fn uvarint_encodes_like_kafka_and_round_trips() {
    for (v, bytes) in [
        (0u32, &[0x00][..]),
        (1, &[0x01]),
        (127, &[0x7f]),
        (128, &[0x80, 0x01]),
        (300, &[0xac, 0x02]),
        (16_383, &[0xff, 0x7f]),
        (16_384, &[0x80, 0x80, 0x01]),
        (1 << 28, &[0x80, 0x80, 0x80, 0x80, 0x01]),
        (u32::MAX, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
    ] {
        assert_eq!(written(|w| w.uvarint(v)), bytes, "{v}");
        let mut r = Reader::new(bytes, "T");
        assert_eq!(r.uvarint("V"), Ok(v));
        r.finish().unwrap();
    }
}

#[test]
fn zigzag_varint_boundaries() {
    for (v, zz) in [
        (0i32, 0u32),
        (-1, 1),
        (1, 2),
        (-2, 3),
        (63, 126),
        (-64, 127),
        (64, 128),
        (i32::MAX, u32::MAX - 1),
        (i32::MIN, u32::MAX),
    ] {
        assert_eq!(varint::zigzag(v), zz, "{v}");
        assert_eq!(varint::unzigzag(zz), v, "{zz}");
        let bytes = written(|w| w.varint(v));
        assert!(bytes.len() <= varint::MAX_LEN);
        let mut r = Reader::new(&bytes, "T");
        assert_eq!(r.varint("V"), Ok(v));
        r.finish().unwrap();
    }
    assert_eq!(written(|w| w.varint(-1)), [0x01]);
    assert_eq!(
        written(|w| w.varint(i32::MIN)),
        [0xff, 0xff, 0xff, 0xff, 0x0f]
    );
    assert_eq!(
        written(|w| w.varint(i32::MAX)),
        [0xfe, 0xff, 0xff, 0xff, 0x0f]
    );
}

#[test]
fn overlong_and_overflowing_varints_are_errors() {
    // A fifth byte above 0x0f would set bits beyond 32.
    for fifth in [0x10, 0x1f, 0x7f] {
        let bytes = [0xff, 0xff, 0xff, 0xff, fifth];
        assert_eq!(varint::get_uvarint(&bytes), Err(VarintError::Overlong));
        assert_eq!(
            Reader::new(&bytes, "T").uvarint("V"),
            Err(WireError::InvalidVarint { path: "T.V".into() })
        );
    }
    // Six bytes, even for a small value.
    let six = [0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    assert_eq!(varint::get_uvarint(&six), Err(VarintError::Overlong));
    assert!(matches!(
        Reader::new(&six, "T").varint("V"),
        Err(WireError::InvalidVarint { .. })
    ));
    // Ends inside the varint.
    let mut r = Reader::new(&[0x80, 0x80], "T");
    assert_eq!(
        r.uvarint("V"),
        Err(WireError::Truncated {
            path: "T.V".into(),
            needed: 1,
            remaining: 0
        })
    );
    assert_eq!(varint::get_uvarint(&[]), Err(VarintError::Truncated));
}

// ---------------------------------------------------------------------------------------------
// Fixed-size values
// ---------------------------------------------------------------------------------------------

#[test]
fn lenient_uvarint_reads_as_kafka_protocol_does() {
    // Same as the strict reader wherever that one succeeds.
    for v in [0u32, 1, 127, 128, 16_383, 16_384, u32::MAX] {
        let mut b = Vec::new();
        varint::put_uvarint(&mut b, v);
        assert_eq!(varint::get_uvarint_lenient(&b), varint::get_uvarint(&b));
    }
    // Where the strict reader refuses, it stops after five bytes and keeps 32 bits.
    let overlong = [0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    assert_eq!(varint::get_uvarint(&overlong), Err(VarintError::Overlong));
    assert_eq!(varint::get_uvarint_lenient(&overlong), Ok((u32::MAX, 5)));
    assert_eq!(
        varint::get_uvarint_lenient(&[0x80, 0x80]),
        Err(VarintError::Truncated)
    );
}

#[test]
fn fixed_size_values_are_big_endian_and_bounds_checked() {
    let uuid = [7u8; 16];
    let bytes = written(|w| {
        w.i8(-2);
        w.i16(-3);
        w.u16(0xfffe);
        w.i32(i32::MIN);
        w.u32(u32::MAX);
        w.i64(-5);
        w.bool(true);
        w.uuid(&uuid);
    });
    assert_eq!(bytes.len(), 1 + 2 + 2 + 4 + 4 + 8 + 1 + 16);
    assert_eq!(bytes[..5], [0xfe, 0xff, 0xfd, 0xff, 0xfe]);
    let mut r = Reader::new(&bytes, "T");
    assert_eq!(r.i8("A"), Ok(-2));
    assert_eq!(r.i16("B"), Ok(-3));
    assert_eq!(r.u16("C"), Ok(0xfffe));
    assert_eq!(r.i32("D"), Ok(i32::MIN));
    assert_eq!(r.u32("E"), Ok(u32::MAX));
    assert_eq!(r.i64("F"), Ok(-5));
    assert_eq!(r.bool("G"), Ok(true));
    assert_eq!(r.uuid("H"), Ok(uuid));
    assert_eq!(
        r.i32("I"),
        Err(WireError::Truncated {
            path: "T.I".into(),
            needed: 4,
            remaining: 0
        })
    );
}

#[test]
fn bool_reads_any_non_zero_as_true() {
    let mut r = Reader::new(&[0x00, 0x01, 0x02], "T");
    assert!(!r.bool("B").unwrap());
    assert!(r.bool("B").unwrap());
    assert!(r.bool("B").unwrap());
}

// ---------------------------------------------------------------------------------------------
// Strings and bytes
// ---------------------------------------------------------------------------------------------

#[test]
fn int16_strings_at_the_length_limit() {
    let longest = "x".repeat(MAX_STRING_LEN);
    let bytes = written(|w| w.string("S", &longest).unwrap());
    assert_eq!(bytes[..2], [0x7f, 0xff]);
    assert_eq!(Reader::new(&bytes, "T").string("S").unwrap(), longest);

    // One byte more is refused, naming the field, and nothing is cut.
    let too_long = "x".repeat(MAX_STRING_LEN + 1);
    let mut w = Writer::new("T");
    let err = w.field("Group", |w| w.string("S", &too_long)).unwrap_err();
    assert!(
        matches!(err, WireError::InvalidValue { ref path, .. } if path == "T.Group.S"),
        "{err}"
    );
    // Likewise for multi-byte characters that straddle the limit.
    let wide = "é".repeat(MAX_STRING_LEN / 2 + 1);
    assert!(Writer::new("T").nullable_string("S", Some(&wide)).is_err());
    // An int16 length cannot declare more than 0x7fff; 0x8000 reads as negative.
    assert!(matches!(
        Reader::new(&[0x80, 0x00], "T").string("S"),
        Err(WireError::InvalidLength { length: -32768, .. })
    ));
}

#[test]
fn compact_strings_at_the_length_limit() {
    let longest = "x".repeat(MAX_STRING_LEN);
    let bytes = written(|w| w.compact_string("S", &longest).unwrap());
    assert_eq!(
        Reader::new(&bytes, "T").compact_string("S").unwrap(),
        longest
    );
    let too_long = "x".repeat(MAX_STRING_LEN + 1);
    assert!(matches!(
        Writer::new("T").compact_string("S", &too_long),
        Err(WireError::InvalidValue { .. })
    ));
    // A declared length of 0x8000 is rejected before looking for the bytes.
    let bytes = written(|w| w.uvarint(0x8001));
    assert!(matches!(
        Reader::new(&bytes, "T").compact_string("S"),
        Err(WireError::InvalidLength { length: 0x8000, .. })
    ));
}

#[test]
fn null_and_empty_strings_differ() {
    let bytes = written(|w| {
        w.compact_string("A", "abc").unwrap();
        w.compact_nullable_string("B", None).unwrap();
        w.compact_nullable_string("C", Some("")).unwrap();
        w.nullable_string("D", None).unwrap();
        w.nullable_string("E", Some("")).unwrap();
    });
    assert_eq!(
        bytes,
        [0x04, b'a', b'b', b'c', 0x00, 0x01, 0xff, 0xff, 0x00, 0x00]
    );
    let mut r = Reader::new(&bytes, "T");
    assert_eq!(r.compact_string("A").unwrap(), "abc");
    assert_eq!(r.compact_nullable_string("B").unwrap(), None);
    assert_eq!(r.compact_nullable_string("C").unwrap(), Some(String::new()));
    assert_eq!(r.nullable_string("D").unwrap(), None);
    assert_eq!(r.nullable_string("E").unwrap(), Some(String::new()));
    r.finish().unwrap();
}

#[test]
fn null_for_a_non_nullable_value_names_the_field() {
    assert_eq!(
        Reader::new(&[0x00], "Msg").compact_string("GroupId"),
        Err(WireError::UnexpectedNull {
            path: "Msg.GroupId".into()
        })
    );
    assert_eq!(
        Reader::new(&[0x00], "Msg").compact_array("Ids", |r| r.i32("")),
        Err(WireError::UnexpectedNull {
            path: "Msg.Ids".into()
        })
    );
    assert!(matches!(
        Reader::new(&[0xff, 0xff], "Msg").string("GroupId"),
        Err(WireError::UnexpectedNull { .. })
    ));
    assert!(matches!(
        Reader::new(&[0xff, 0xff, 0xff, 0xff], "Msg").bytes("Value"),
        Err(WireError::UnexpectedNull { .. })
    ));
    // Other negative lengths are not null but invalid.
    assert!(matches!(
        Reader::new(&[0xff, 0xfe], "Msg").nullable_string("S"),
        Err(WireError::InvalidLength { length: -2, .. })
    ));
    assert!(matches!(
        Reader::new(&[0xff, 0xff, 0xff, 0xfe], "Msg").nullable_bytes("B"),
        Err(WireError::InvalidLength { length: -2, .. })
    ));
}

#[test]
fn invalid_utf8_is_an_error() {
    let mut r = Reader::new(&[0x03, 0xc3, 0x28], "T");
    let err = r.compact_string("S").unwrap_err();
    assert!(matches!(err, WireError::InvalidUtf8 { ref path, .. } if path == "T.S"));
    let mut r = Reader::new(&[0x00, 0x02, 0xc3, 0x28], "T");
    assert!(matches!(r.string("S"), Err(WireError::InvalidUtf8 { .. })));
}

#[test]
fn bytes_null_empty_and_truncated() {
    let bytes = written(|w| {
        w.bytes("A", &[1, 2]).unwrap();
        w.nullable_bytes("B", None).unwrap();
        w.compact_bytes("C", &[]).unwrap();
        w.compact_nullable_bytes("D", None).unwrap();
    });
    assert_eq!(
        bytes,
        [0, 0, 0, 2, 1, 2, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00]
    );
    let mut r = Reader::new(&bytes, "T");
    assert_eq!(r.bytes("A").unwrap(), [1, 2]);
    assert_eq!(r.nullable_bytes("B").unwrap(), None);
    assert_eq!(r.compact_bytes("C").unwrap(), [0u8; 0]);
    assert_eq!(r.compact_nullable_bytes("D").unwrap(), None);
    r.finish().unwrap();
    // A 2 GiB length over 2 bytes: an error, not an allocation.
    assert!(matches!(
        Reader::new(&[0x7f, 0xff, 0xff, 0xff, 0, 0], "T").bytes("K"),
        Err(WireError::Truncated { .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Arrays
// ---------------------------------------------------------------------------------------------

#[test]
fn array_counts_larger_than_the_remaining_bytes_are_rejected_before_allocating() {
    // Compact: u32::MAX - 1 elements declared, 0 bytes left.
    let bytes = [0xff, 0xff, 0xff, 0xff, 0x0f];
    assert_eq!(
        Reader::new(&bytes, "T").compact_nullable_array("A", |r| r.i32("")),
        Err(WireError::LengthExceedsRemaining {
            path: "T.A".into(),
            length: 4_294_967_294,
            remaining: 0
        })
    );
    // int32: i32::MAX elements in 1 byte.
    let bytes = [0x7f, 0xff, 0xff, 0xff, 0x00];
    assert!(matches!(
        Reader::new(&bytes, "T").array("A", |r| r.i8("")),
        Err(WireError::LengthExceedsRemaining { remaining: 1, .. })
    ));
    // A count equal to the remaining bytes is allowed (elements of one byte).
    let mut r = Reader::new(&[0x03, 1, 2], "T");
    assert_eq!(r.compact_array("A", |r| r.i8("")).unwrap(), [1, 2]);
    let mut r = Reader::new(&[0x04, 1, 2], "T");
    assert!(matches!(
        r.compact_array("A", |r| r.i8("")),
        Err(WireError::LengthExceedsRemaining { .. })
    ));
}

#[test]
fn array_lengths_round_trip_null_and_empty() {
    let ids = [1i32, -1];
    let bytes = written(|w| {
        w.array("A", &ids, |w, v| {
            w.i32(*v);
            Ok(())
        })
        .unwrap();
        w.nullable_array("B", None::<&[i32]>, |_, _| Ok(()))
            .unwrap();
        w.compact_array("C", &[] as &[i32], |_, _| Ok(())).unwrap();
        w.compact_nullable_array("D", None::<&[i32]>, |_, _| Ok(()))
            .unwrap();
    });
    assert_eq!(
        bytes,
        [
            0, 0, 0, 2, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00
        ]
    );
    let mut r = Reader::new(&bytes, "T");
    assert_eq!(r.array("A", |r| r.i32("")).unwrap(), ids);
    assert_eq!(r.nullable_array("B", |r| r.i32("")).unwrap(), None);
    assert_eq!(
        r.compact_array("C", |r| r.i32("")).unwrap(),
        Vec::<i32>::new()
    );
    assert_eq!(r.compact_nullable_array("D", |r| r.i32("")).unwrap(), None);
    r.finish().unwrap();
}

#[test]
fn array_paths_name_the_element() {
    // Two strings declared, the second truncated.
    let bytes = [0x03, 0x02, b'a', 0x05, b'b'];
    let mut r = Reader::new(&bytes, "Msg");
    let err = r
        .field("Topology", |r| {
            r.compact_array("SourceTopics", |r| r.compact_string(""))
        })
        .unwrap_err();
    assert_eq!(
        err,
        WireError::Truncated {
            path: "Msg.Topology.SourceTopics[1]".into(),
            needed: 4,
            remaining: 1
        }
    );
    assert_eq!(
        err.to_string(),
        "truncated while reading Msg.Topology.SourceTopics[1]: needed 4 byte(s), 1 left"
    );
    // And on the writing side.
    let mut w = Writer::new("Msg");
    let long = "x".repeat(MAX_STRING_LEN + 1);
    let err = w
        .compact_strings("Topics", &["ok".to_owned(), long])
        .unwrap_err();
    assert_eq!(err.path(), Some("Msg.Topics[1]"));
}

#[test]
fn nullable_struct_marker_follows_kafka() {
    let bytes = written(|w| {
        w.nullable_struct_with("S", None::<&i32>, |_, _| Ok(()))
            .unwrap();
        w.nullable_struct_with("S", Some(&7), |w, v| {
            w.i32(*v);
            Ok(())
        })
        .unwrap();
    });
    assert_eq!(bytes, [0xff, 0x01, 0, 0, 0, 7]);
    // Kafka reads any negative marker as null and anything else as present.
    let mut r = Reader::new(&[0x80, 0x00, 0, 0, 0, 9], "T");
    assert_eq!(r.nullable_struct_with("S", |r| r.i32("")).unwrap(), None);
    assert_eq!(r.nullable_struct_with("S", |r| r.i32("")).unwrap(), Some(9));
}

// ---------------------------------------------------------------------------------------------
// Tagged fields
// ---------------------------------------------------------------------------------------------

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
    let bytes = written(|w| {
        w.tagged_fields_with(vec![(3, vec![0x01, 0x02])], &unknown)
            .unwrap()
    });
    assert_eq!(
        bytes,
        [0x03, 0x00, 0x00, 0x03, 0x02, 0x01, 0x02, 0x07, 0x01, 0xaa]
    );

    // Reading with tag 3 known: its payload is read, the rest is kept in order.
    let mut seen = None;
    let mut r = Reader::new(&bytes, "T");
    let kept = r
        .tagged_fields_with(|tag, payload| {
            if tag == 3 {
                seen = Some(payload.i16("Known")?);
                Ok(true)
            } else {
                Ok(false)
            }
        })
        .unwrap();
    r.finish().unwrap();
    assert_eq!(seen, Some(0x0102));
    assert_eq!(
        kept.iter().map(|f| f.tag).collect::<Vec<_>>(),
        vec![0, 7],
        "unknown fields kept in wire order"
    );
    // Skipping drops them all.
    let mut r = Reader::new(&bytes, "T");
    r.skip_tagged_fields().unwrap();
    r.finish().unwrap();
}

#[test]
fn known_tagged_field_must_take_exactly_its_size() {
    // One tagged field, tag 0, 5 bytes, of which the value takes 4.
    let bytes = [0x01, 0x00, 0x05, 0, 0, 0, 1, 9];
    let err = Reader::new(&bytes, "T")
        .tagged_fields_with(|_, payload| payload.i32("X").map(|_| true))
        .unwrap_err();
    assert_eq!(
        err,
        WireError::TaggedFieldSize {
            path: "T.TaggedFields".into(),
            tag: 0,
            size: 5,
            used: 4
        }
    );
    // Declared as 3 bytes: the value runs out inside its payload, path included.
    let bytes = [0x01, 0x00, 0x03, 0, 0, 0];
    let err = Reader::new(&bytes, "T")
        .tagged_fields_with(|_, payload| payload.i32("X").map(|_| true))
        .unwrap_err();
    assert_eq!(err.path(), Some("T.TaggedFields.X"));
}

#[test]
fn tagged_field_collision_with_a_known_tag_is_an_error() {
    let unknown = vec![RawTaggedField {
        tag: 3,
        data: vec![],
    }];
    let err = Writer::new("T")
        .tagged_fields_with(vec![(3, vec![])], &unknown)
        .unwrap_err();
    assert!(matches!(
        err,
        WireError::DuplicateTaggedField { tag: 3, .. }
    ));
}

#[test]
fn tagged_fields_must_ascend_and_fit() {
    let dup = [0x02, 0x01, 0x00, 0x01, 0x00];
    assert!(matches!(
        Reader::new(&dup, "T").tagged_fields(),
        Err(WireError::DuplicateTaggedField { tag: 1, .. })
    ));
    let dec = [0x02, 0x02, 0x00, 0x01, 0x00];
    assert!(matches!(
        Reader::new(&dec, "T").tagged_fields(),
        Err(WireError::TaggedFieldsOutOfOrder {
            previous: 2,
            tag: 1,
            ..
        })
    ));
    // Declared size beyond the input.
    let big = [0x01, 0x00, 0x7f];
    assert!(matches!(
        Reader::new(&big, "T").tagged_fields(),
        Err(WireError::Truncated { .. })
    ));
    // Declared count beyond the input, even a huge one.
    for many in [&[0x7f, 0x00][..], &[0xff, 0xff, 0xff, 0xff, 0x0f]] {
        assert!(matches!(
            Reader::new(many, "T").tagged_fields(),
            Err(WireError::LengthExceedsRemaining { .. })
        ));
    }
}

#[test]
fn finish_reports_trailing_bytes() {
    let mut r = Reader::new(&[1, 2, 3], "Root");
    r.i8("").unwrap();
    assert_eq!(
        r.finish(),
        Err(WireError::TrailingBytes {
            message: "Root",
            count: 2
        })
    );
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
