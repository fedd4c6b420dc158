//! The `mock` assignor (spec §5.4): keeps current actives, gives each unowned task to the member
//! with the fewest active tasks. No standbys. Deterministic: members in id order, tasks sorted.

use crate::util::map::BTreeMap;

use super::*;
use crate::util::sort;

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct MockAssignor;

impl TaskAssignor for MockAssignor {
    fn name(&self) -> &'static str {
        "mock"
    }

    fn assign(
        &self,
        group: &GroupSpec,
        topology: &TopologySpec,
    ) -> Result<GroupAssignment, AssignorError> {
        let mut out: BTreeMap<String, MemberAssignment> = sort::collect_map(
            group
                .members
                .keys()
                .map(|m| (m.clone(), MemberAssignment::default())),
        );
        let mut owner: BTreeMap<TaskId, &str> = BTreeMap::new();
        for (id, m) in &group.members {
            for t in m.active_tasks.iter() {
                if !topology.contains(&t) {
                    continue;
                }
                if let Some(other) = owner.insert(t.clone(), id) {
                    return Err(AssignorError(format!(
                        "task {t} is owned by both {other} and {id}"
                    )));
                }
                if let Some(a) = out.get_mut(id) {
                    a.active.insert(&t.subtopology, t.partition);
                }
            }
        }
        if out.is_empty() {
            return Ok(GroupAssignment { members: out });
        }
        for t in topology.tasks() {
            if owner.contains_key(&t) {
                continue;
            }
            // Fewest active tasks, ties to the smallest member id.
            let target = out
                .iter()
                .min_by(|a, b| a.1.active.len().cmp(&b.1.active.len()).then(a.0.cmp(b.0)))
                .map(|(id, _)| id.clone())
                .ok_or_else(|| AssignorError("no members".into()))?;
            if let Some(a) = out.get_mut(&target) {
                a.active.insert(&t.subtopology, t.partition);
            }
        }
        Ok(GroupAssignment { members: out })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mock_keeps_owned_and_balances_the_rest() {
        let mut group = GroupSpec::default();
        let mut a = MemberSpec::default();
        a.active_tasks.insert("0", 0);
        a.active_tasks.insert("0", 1);
        group.members.insert("a".into(), a);
        group.members.insert("b".into(), MemberSpec::default());
        let mut topo = TopologySpec::default();
        topo.subtopologies.insert(
            "0".into(),
            SubtopologySpec {
                number_of_tasks: 4,
                stateful: false,
            },
        );
        let out = MockAssignor.assign(&group, &topo).unwrap();
        assert_eq!(out.members["a"].active.len(), 2);
        assert_eq!(out.members["b"].active.len(), 2);
        assert!(out.members["a"].active.contains("0", 0));
    }
}
