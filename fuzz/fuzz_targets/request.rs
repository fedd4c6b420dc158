//! Every request decoder the server uses, with a valid header: the first byte picks a served key
//! and version, the rest is the body. (The `frame` target must first discover valid headers.)
#![no_main]
use groupcoord::server::SUPPORTED;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let pairs: Vec<(i16, i16)> = SUPPORTED
        .iter()
        .flat_map(|&(k, lo, hi)| (lo..=hi).map(move |v| (k, v)))
        .collect();
    let (key, version) = pairs[pick as usize % pairs.len()];
    let Ok(frame) = groupcoord::server::tools::client::raw_frame(key, version, 1, Some("fuzz"), body)
    else {
        return;
    };
    let _ = groupcoord::server::decode_request_frame(&frame[4..]);
});
