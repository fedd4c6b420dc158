//! The live view's reading of a group: the same [`crate::sim::GroupView`] the simulation shows
//! the explorer, built from the coordinator's real state (see
//! [`crate::sim::coordinator_group_view`], shared with the explorer's replay of a server's
//! records).

pub use crate::sim::coordinator_group_view as group_view;
