//! Small helpers shared by the core.

// The wasm module's input reader (natively, tests compare it with serde).
#[cfg(any(target_arch = "wasm32", test))]
pub(crate) mod json;
pub mod map;
pub mod sort;
