//! wasm bindings (being written).
