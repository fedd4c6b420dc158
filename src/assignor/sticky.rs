//! The `sticky` task assignor (spec §5.3). (Being written; delegates to `mock` meanwhile.)

use super::*;

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct StickyTaskAssignor;

impl TaskAssignor for StickyTaskAssignor {
    fn name(&self) -> &'static str {
        "sticky"
    }

    fn assign(
        &self,
        group: &GroupSpec,
        topology: &TopologySpec,
    ) -> Result<GroupAssignment, AssignorError> {
        mock::MockAssignor.assign(group, topology)
    }
}
