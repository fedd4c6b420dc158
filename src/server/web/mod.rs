//! The web side: static files and the live view over HTTP ([`http`]), Prometheus [`metrics`],
//! and the live view itself ([`LiveView`]), which the owner keeps.
//!
//! Describing a group costs as much as a DescribeGroups request, so the live view is computed
//! only when someone is watching (an SSE subscriber, or an `/api/groups` or `/metrics` request),
//! and then only for the groups that changed since the last time: with 100,000 groups and nobody
//! watching, a state change costs the view one set insertion.

mod exchange;
pub mod history;
pub mod http;
pub mod metrics;
pub mod phases;
pub mod view;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use serde::{Serialize, Serializer};

use crate::protocol::{DescribedGroup, StreamsGroupDescribeRequest};

use self::metrics::Metrics;
use super::kafka::State;
use super::now_ms;
use super::storage::log::LogEntry;

/// Changed groups remembered one by one; beyond this the whole view is recomputed instead.
const MAX_TRACKED: usize = 10_000;

/// One group in the live view.
#[derive(Debug, Clone, Serialize)]
pub struct LiveGroup {
    pub group_id: String,
    pub group_state: String,
    pub group_type: String,
    /// Members the coordinator knows.
    pub member_count: usize,
    /// StreamsGroupDescribe's answer (streams groups only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub describe: Option<DescribedGroup>,
    /// The group as the explorer shows it: the simulation's view model, from the
    /// coordinator's real state.
    pub view: Option<crate::sim::GroupView>,
}

/// The live view pushed to `/api/events` and served by `/api/groups`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveSnapshot {
    pub seq: u64,
    pub time_ms: i64,
    pub topics: BTreeMap<String, i32>,
    /// Shared with the owner's cache: publishing does not copy unchanged groups.
    #[serde(serialize_with = "shared_groups")]
    pub groups: Vec<Arc<LiveGroup>>,
}

fn shared_groups<S: Serializer>(groups: &[Arc<LiveGroup>], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(groups.iter().map(|g| &**g))
}

/// The owner's cache of described groups and what changed since it was last brought up to date.
#[derive(Debug)]
pub struct LiveView {
    seq: u64,
    groups: BTreeMap<String, Arc<LiveGroup>>,
    changed: BTreeSet<String>,
    /// Everything may have changed (at start, or the topics changed: the topology of every
    /// group is described against them).
    all_changed: bool,
    last: Option<Arc<LiveSnapshot>>,
}

impl Default for LiveView {
    fn default() -> Self {
        LiveView::new()
    }
}

impl LiveView {
    pub fn new() -> LiveView {
        LiveView {
            seq: 0,
            groups: BTreeMap::new(),
            changed: BTreeSet::new(),
            all_changed: true,
            last: None,
        }
    }

    /// Take note of a log entry the owner produced.
    pub fn note(&mut self, entry: &LogEntry) {
        match entry {
            LogEntry::Records(rs) => rs.iter().for_each(|r| self.group_changed(r.group_id())),
            LogEntry::Topics(_) => self.all_changed = true,
            LogEntry::GroupConfigs(cs) => cs.iter().for_each(|c| self.group_changed(&c.group)),
            LogEntry::Acls(_) => {}
            LogEntry::Scram(_) => {}
        }
    }

    /// Something about this group changed.
    pub fn group_changed(&mut self, group_id: &str) {
        if self.all_changed || self.changed.contains(group_id) {
            return;
        }
        if self.changed.len() >= MAX_TRACKED {
            // Long unwatched: remembering every group costs more than describing them all
            // once when someone looks again.
            self.all_changed = true;
            self.changed.clear();
        } else {
            self.changed.insert(group_id.to_string());
        }
    }

    pub fn has_changes(&self) -> bool {
        self.all_changed || !self.changed.is_empty() || self.last.is_none()
    }

    /// The view, brought up to date by describing only the groups that changed.
    pub fn snapshot(&mut self, state: &State, metrics: &Metrics) -> Arc<LiveSnapshot> {
        if let Some(last) = &self.last
            && !self.all_changed
            && self.changed.is_empty()
        {
            return last.clone();
        }
        let ids: Vec<String> = if self.all_changed {
            self.groups.clear();
            state.coord.group_ids()
        } else {
            std::mem::take(&mut self.changed).into_iter().collect()
        };
        self.all_changed = false;
        self.changed.clear();
        metrics
            .live_groups_described
            .fetch_add(ids.len() as u64, Relaxed);
        // Consumer and classic groups are read from the coordinator; streams groups described.
        let mut streams_ids = Vec::with_capacity(ids.len());
        for id in ids {
            match other_group(&state.coord, &id) {
                Some(Some(g)) => {
                    self.groups.insert(id, Arc::new(g));
                }
                Some(None) => {
                    self.groups.remove(&id);
                }
                None => streams_ids.push(id),
            }
        }
        let described = state.coord.streams_group_describe(
            &StreamsGroupDescribeRequest {
                group_ids: streams_ids,
                ..Default::default()
            },
            1,
        );
        for d in described.groups {
            if d.error_code != 0 {
                // Deleted (or only committed offsets, which the view does not show).
                self.groups.remove(&d.group_id);
                continue;
            }
            let g = LiveGroup {
                view: view::group_view(&state.coord, &d.group_id),
                group_id: d.group_id.clone(),
                group_state: d.group_state.clone(),
                group_type: "streams".to_string(),
                member_count: d.members.len(),
                describe: Some(d),
            };
            self.groups.insert(g.group_id.clone(), Arc::new(g));
        }
        self.seq += 1;
        let snap = Arc::new(LiveSnapshot {
            seq: self.seq,
            time_ms: now_ms().0,
            topics: state.topics.clone(),
            groups: self.groups.values().cloned().collect(),
        });
        self.last = Some(snap.clone());
        snap
    }
}

/// A consumer or classic group's live entry: `None` when `group_id` is not one of those (a
/// streams group, or unknown: described as streams), `Some(None)` when it is a group without
/// members or state worth showing (a classic group that only holds offsets).
fn other_group(
    coord: &crate::coordinator::Coordinator,
    group_id: &str,
) -> Option<Option<LiveGroup>> {
    if let Some(v) = crate::sim::consumer_group_view(coord, group_id) {
        return Some(Some(LiveGroup {
            group_id: group_id.to_string(),
            group_state: v.state.clone(),
            group_type: "consumer".to_string(),
            member_count: v.members.len(),
            describe: None,
            view: Some(v),
        }));
    }
    let v = crate::sim::classic_group_view(coord, group_id)?;
    Some(Some(LiveGroup {
        group_id: group_id.to_string(),
        group_state: v.state.clone(),
        group_type: "classic".to_string(),
        member_count: v.members.len(),
        describe: None,
        view: Some(v),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unwatched_view_remembers_a_bounded_number_of_groups() {
        let mut v = LiveView::new();
        v.all_changed = false;
        for g in 0..MAX_TRACKED + 5 {
            v.group_changed(&format!("g{g}"));
        }
        assert!(v.all_changed);
        assert!(v.changed.is_empty());
        assert!(v.has_changes());
    }
}
