//! The coordinator API the server codes against.
pub use crate::coordinator::{
    Coordinator, FetchedOffset, ListedGroup, OffsetCommitInput, OffsetCommitPartition,
    OffsetCommitTopic, OffsetFetchInput, Outcome, ReplayError, RequestContext, TimerChange,
    TimerKey,
};
