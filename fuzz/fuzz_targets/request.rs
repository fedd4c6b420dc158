//! Every request decoder the server uses, with a valid header: the first byte picks a served key
//! and version, the rest is the body. (The `frame` target must first discover valid headers.)
#![no_main]
use groupcoord::server::wire::{self, Header, SUPPORTED};
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
    let h = Header {
        api_key: key,
        api_version: version,
        correlation_id: 1,
        client_id: Some("fuzz".into()),
    };
    let Ok(frame) =
        groupcoord::server::tools::client::raw_frame(key, version, 1, h.client_id.as_deref(), body)
    else {
        return;
    };
    let _ = wire::decode_frame(bytes::Bytes::copy_from_slice(&frame[4..]), true);
});
