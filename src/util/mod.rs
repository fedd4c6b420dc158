//! Small helpers shared by the core.

pub mod sort;
