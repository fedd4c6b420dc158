//! The coordinator API the server codes against.
pub use super::pending::*;
