//! Small helpers shared by the core.

pub mod map;
pub mod sort;
