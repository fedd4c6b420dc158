//! The log loader on arbitrary files: a segment (with and without a commit mark) and a snapshot.
//! It must return a load or an error, never panic; a successful load must leave a log that loads
//! again to the same entries.
#![no_main]
use libfuzzer_sys::fuzz_target;

use groupcoord::server::storage::log::Log;

fn load(dir: &std::path::Path) -> Option<usize> {
    let mut n = 0;
    Log::open(dir, u64::MAX, |_| {
        n += 1;
        Ok(())
    })
    .ok()
    .map(|_| n)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("groupcoord-fuzz-log-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    match mode % 3 {
        0 => std::fs::write(dir.join(format!("segment-{:020}.log", 0)), bytes).unwrap(),
        1 => std::fs::write(dir.join(format!("snapshot-{:020}.snap", 1)), bytes).unwrap(),
        _ => {
            let half = bytes.len() / 2;
            std::fs::write(dir.join(format!("segment-{:020}.log", 0)), &bytes[..half]).unwrap();
            std::fs::write(dir.join("COMMIT"), &bytes[half..]).unwrap();
        }
    }
    if let Some(first) = load(&dir) {
        assert_eq!(load(&dir), Some(first), "a loaded log loads again the same");
    }
    let _ = std::fs::remove_dir_all(&dir);
});
