//! A whole request frame (without its length prefix): header parsing, pre-validation and the
//! decoder of whatever key and version the header names.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = groupcoord::server::decode_request_frame(data);
});
