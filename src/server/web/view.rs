//! The live view's reading of a group: the same [`crate::sim::GroupView`] the simulation shows
//! the explorer, built from the coordinator's real state by the core's view builders
//! ([`crate::sim::coordinator_group_view`], shared with the explorer's replay of a server's
//! records, [`crate::sim::consumer_group_view`] and [`crate::sim::classic_group_view`]).

pub use crate::sim::coordinator_group_view as group_view;
