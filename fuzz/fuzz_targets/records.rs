//! The coordinator record codec: one key/value record, and a batch as the log stores it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = groupcoord::records::decode_batch(data);
    if let Some((&split, rest)) = data.split_first() {
        let at = (split as usize).min(rest.len());
        let (key, value) = rest.split_at(at);
        let value = if value.is_empty() { None } else { Some(value) };
        if let Ok(r) = groupcoord::records::decode_record(key, value) {
            // What decodes re-encodes and decodes to the same record.
            let Ok((k, v)) = groupcoord::records::encode_record(&r) else { return };
            let again = groupcoord::records::decode_record(&k, v.as_deref()).unwrap();
            assert_eq!(again, r);
        }
    }
});
