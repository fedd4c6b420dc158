//! Browser tests of the wasm API (`groupcoord::wasm::WasmSimulation`) in headless Chromium.
//! Run: `pkg-scripts/test-wasm.sh` (or `cargo test --target wasm32-unknown-unknown --test
//! wasm_browser` with `wasm-bindgen-test-runner` and chromedriver on PATH).
//!
//! The tests live in `src/wasm/browser_tests.rs` so the lib's wasm test build can run them too
//! (`cargo test --target wasm32-unknown-unknown --lib`), which works even when the binary target
//! does not compile for wasm32 (cargo builds the binaries for integration tests).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

include!("../src/wasm/browser_tests.rs");
