// Protocol terms shown as tooltips (hover any dotted-underlined word).
// `kip` names the KIP-1071 section, `spec` the section of the project's notes, docs/protocol.md.
export const GLOSSARY = {
  'group-epoch': { t: 'Group epoch', kip: 'Streams Group → Group Epoch', spec: '§2.3',
    d: 'Version of the group\'s membership and metadata. Bumped when a member joins, leaves or is fenced, when its topology, process, rack or client tags change, when topic metadata changes, or when a warm-up task caught up. A higher group epoch than assignment epoch means a new target assignment must be computed.' },
  'assignment-epoch': { t: 'Assignment epoch', kip: 'Streams Group → Target Assignment', spec: '§3.10',
    d: 'The group epoch at which the current target assignment was computed. While groupEpoch > assignmentEpoch the group is ASSIGNING.' },
  'member-epoch': { t: 'Member epoch', kip: 'Reconciliation → Member Epoch', spec: '§3.5, §4',
    d: 'The assignment epoch a member has reconciled to. A member only moves to the new epoch after it revoked every task it must give up. Heartbeats with a stale epoch are fenced (FENCED_MEMBER_EPOCH).' },
  'topology-epoch': { t: 'Topology epoch', kip: 'Topology → Topology Epoch', spec: '§3.6',
    d: 'Version of the Streams topology the members run. Members with a newer topology epoch initialise the group\'s topology; until the coordinator validates it (internal topics exist) the group is NOT_READY.' },
  reconciliation: { t: 'Reconciliation', kip: 'Reconciliation', spec: '§4',
    d: 'How each member moves from its current assignment to its target assignment: first revoke what must go (UNREVOKED_TASKS), then get tasks that others have released (UNRELEASED_TASKS), then STABLE at the assignment epoch. An active task is never owned by two members at once.' },
  'target-assignment': { t: 'Target assignment', kip: 'Target Assignment', spec: '§3.10, §5',
    d: 'What the assignor wants each member to run, computed on the broker for the whole group. Members converge to it step by step (reconciliation).' },
  active: { t: 'Active task', kip: 'Task Assignment → Active Tasks', spec: '§5.3',
    d: 'A task (subtopology × partition) that processes records. Exactly one member of the group runs it.' },
  standby: { t: 'Standby task', kip: 'Task Assignment → Standby Tasks', spec: '§5.3',
    d: 'A replica of a stateful task\'s state store kept up to date on another process, so a failover can resume quickly. num.standby.replicas per task, never on the process that runs the active.' },
  warmup: { t: 'Warm-up task', kip: 'Task Assignment → Warm-up Tasks', spec: '§3.15',
    d: 'A temporary standby that restores state on a process where the assignor wants to move an active task. When its lag drops below acceptable.recovery.lag the group epoch is bumped and the active can move.' },
  'pending-revocation': { t: 'Pending revocation', kip: 'Reconciliation', spec: '§4.2',
    d: 'Tasks the member was told to give up and has not yet acknowledged. Other members cannot receive them until the member reports it no longer owns them.' },
  UNREVOKED_TASKS: { t: 'UNREVOKED_TASKS', kip: 'Reconciliation → Member States', spec: '§2.2, §4.1', why: 'The new target takes tasks away from this member: it must report them revoked (in a heartbeat) before it moves to the new epoch.',
    d: 'Member state: the member must revoke tasks before it can move to the next epoch. Its epoch stays at the old value.' },
  UNRELEASED_TASKS: { t: 'UNRELEASED_TASKS', kip: 'Reconciliation → Member States', spec: '§2.2, §4.1', why: 'It is at the new epoch, but some of its target tasks are still owned (or being revoked) by other members: it gets them on a later heartbeat.',
    d: 'Member state: the member is already at the new epoch but waits for tasks still owned (or pending revocation) by other members.' },
  STABLE: { t: 'STABLE (member)', kip: 'Reconciliation → Member States', spec: '§2.2', why: 'It owns exactly what the coordinator gave it for its epoch. If that epoch is older than the assignment epoch, it learns the new one on its next heartbeat.',
    d: 'Member state: fully reconciled with its (intermediate) target at its epoch.' },
  'group-state': { t: 'Group state', kip: 'Streams Group → Group States', spec: '§2.1',
    d: 'EMPTY (no members) → NOT_READY (no validated topology / missing topics) → ASSIGNING (groupEpoch > assignmentEpoch) → RECONCILING (some member not STABLE at the assignment epoch) → STABLE.' },
  session: { t: 'Session timeout', kip: 'Heartbeat → Session Timeout', spec: '§3.13',
    d: 'If the coordinator hears nothing from a member for group.streams.session.timeout.ms, it fences the member: removes it and bumps the group epoch, so its tasks move. The arc shrinks until the deadline.' },
  heartbeat: { t: 'StreamsGroupHeartbeat (API key 88)', kip: 'StreamsGroupHeartbeat API', spec: '§1.1, §3',
    d: 'The only RPC a member uses: joins (epoch 0), reports owned tasks, receives its assignment and statuses, leaves (epoch -1, or -2 for a static member).' },
  'static-member': { t: 'Static membership', kip: 'Static Membership', spec: '§3.3',
    d: 'A member with group.instance.id. It leaves with epoch -2 and can rejoin within the session timeout, getting its tasks back without a rebalance.' },
  assignor: { t: 'Assignor', kip: 'Assignors', spec: '§5.2-5.4',
    d: 'Server-side task assignor (sticky is the default and only built-in; mock is test-only). It computes the target assignment from members, topology and partition counts.' },
  statuses: { t: 'Heartbeat statuses', kip: 'StreamsGroupHeartbeat → Status', spec: '§1.3, §3.11',
    d: 'Group-level conditions reported to every member: STALE_TOPOLOGY, MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS, SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED, MISSING_CLIENT_TAGS.' },
  shutdown: { t: 'Shutdown application', kip: 'Shutdown Application', spec: '§3.14',
    d: 'A member can ask the whole application to shut down; the coordinator answers every member with SHUTDOWN_APPLICATION until the group is empty.' },
  invariant: { t: 'Invariants', kip: 'Reconciliation (safety)', spec: '§2, §4',
    d: 'Safety properties checked after every step (e.g. an active task owned by at most one member; member epochs never exceed the group epoch). A violation pauses playback.' },
  // Classic consumer groups: `spec` is the section of docs/classic-protocol.md.
  'classic-state': { t: 'Classic group state', classic: true, spec: '§C1',
    d: 'Empty (no members) → PreparingRebalance (join phase: waiting for every member\'s JoinGroup) → CompletingRebalance (sync phase: waiting for the leader\'s assignment in SyncGroup) → Stable. Any join, leave or session timeout starts a new rebalance. Dead: the group is gone.' },
  generation: { t: 'Generation', classic: true, spec: '§C1, §C2.2',
    d: 'The classic group\'s epoch: +1 at the end of every join phase. Every SyncGroup, Heartbeat and offset commit carries it; an old one gets ILLEGAL_GENERATION, so a member that missed a rebalance cannot commit for partitions that moved.' },
  leader: { t: 'Group leader', classic: true, spec: '§C2.3',
    d: 'One member chosen by the coordinator (the first to join, or kept from before). Its JoinGroup answer lists every member\'s subscription; it runs the assignor on the client and sends the whole assignment in its SyncGroup.' },
  'classic-assignor': { t: 'Client-side assignor', classic: true, spec: '§C2.5',
    d: 'partition.assignment.strategy, chosen by the members\' votes (every member must support it). range and roundrobin are eager: every consumer revokes all its partitions before rejoining. cooperative-sticky is cooperative: consumers keep their partitions and only give up those that move, handed out by a second rebalance.' },
  'stop-the-world': { t: 'Stop-the-world rebalance', classic: true, spec: '§C2.2',
    d: 'Under the eager protocol every consumer revokes all its partitions when a rebalance starts and gets new ones only after SyncGroup: for the whole rebalance nobody consumes. The red band shows how many partitions had no owner, over time; cooperative rebalancing keeps it small.' },
  'classic-client-state': { t: 'Consumer state (client side)', classic: true, spec: '§C2, §C3',
    d: 'unjoined (about to send JoinGroup) → joining (JoinGroup in flight, incl. the MEMBER_ID_REQUIRED round trip) → awaiting_sync (SyncGroup in flight) → stable (has its partitions, heartbeats). revoking: giving up partitions before rejoining. stopped: crashed, left or closed.' },
  'owned-partitions': { t: 'Owned partitions', classic: true, spec: '§C3.2',
    d: 'The partitions a consumer consumes: what its last SyncGroup answer assigned it, minus what it revoked since.' },
  revoked: { t: 'Revoked partitions', classic: true, spec: '§C2.2',
    d: 'Partitions the consumer gave up in its last rebalance. Eager: all of them, before the JoinGroup. Cooperative: only those assigned elsewhere, which makes the consumer rejoin once more so they can be handed out.' },
  'classic-requests': { t: 'Classic group requests', classic: true, spec: '§C2-§C4',
    d: 'JoinGroup (API 11) ■, SyncGroup (14) ◆, Heartbeat (12) ●, LeaveGroup (13) ▬: each exchange is a line from the consumer to the coordinator. Click one for its decoded fields and wire bytes.' },
  'api-JoinGroup': { t: 'JoinGroup (API key 11)', classic: true, spec: '§C2',
    d: 'Joins or rejoins the group with the consumer\'s subscription and supported assignors. The coordinator answers when the join phase ends: the new generation, the leader, and for the leader every member\'s subscription. A first join without a member id is answered MEMBER_ID_REQUIRED with the id to use.' },
  'api-SyncGroup': { t: 'SyncGroup (API key 14)', classic: true, spec: '§C3',
    d: 'After the join phase: the leader sends every member\'s assignment, followers send none; each gets its own assignment back once the leader\'s has arrived.' },
  'api-Heartbeat': { t: 'Heartbeat (API key 12)', classic: true, spec: '§C4.1',
    d: 'Keeps the session alive; REBALANCE_IN_PROGRESS tells the consumer to rejoin, ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID that it missed a rebalance or was removed.' },
  'api-LeaveGroup': { t: 'LeaveGroup (API key 13)', classic: true, spec: '§C4.3',
    d: 'A dynamic consumer closing: it is removed at once and a rebalance starts, without waiting for the session timeout. Static members do not send it.' },
  // "Why am I here": one line per group and member state (hover or focus a state badge).
  'not-in-group': { t: 'Not in the group', spec: '§3.4', why: 'The coordinator has no such member: its joining heartbeat (epoch 0) has not arrived yet, or it left or was fenced and the client has not rejoined.', d: 'A process that starts shows its members here until their first heartbeat is answered.' },
  'gs-Empty': { t: 'Group state Empty', spec: '§2.1', why: 'The group has no members (all left or were fenced); its epochs and offsets remain.', d: 'A member joining (a heartbeat with epoch 0) makes it NotReady or Assigning.' },
  'gs-NotReady': { t: 'Group state NotReady', spec: '§2.1', why: 'Members exist but the topology cannot run yet: no topology, or it is not validated (missing source or internal topics; see the statuses).', d: 'The coordinator validates the topology against the topics (§3.8); once every source topic and internal topic exists the group moves on.' },
  'gs-Assigning': { t: 'Group state Assigning', spec: '§2.1, §3.10', why: 'The group epoch is ahead of the assignment epoch: membership or metadata changed and the new target assignment is not computed yet.', d: 'The assignor runs on a heartbeat once the assignment interval allows it; then the assignment epoch catches up.' },
  'gs-Reconciling': { t: 'Group state Reconciling', spec: '§2.1, §4', why: 'A target assignment exists, but some member is not yet STABLE at the assignment epoch (it still revokes, or waits for tasks).', d: 'Members converge one heartbeat at a time: revoke first, then receive what others released.' },
  'gs-Stable': { t: 'Group state Stable', spec: '§2.1', why: 'Every member is STABLE at the assignment epoch, which equals the group epoch: nothing is moving.', d: 'Members only heartbeat. The next join, leave, fence or topic change bumps the group epoch.' },
  'gs-Dead': { t: 'Group state Dead', spec: '§2.1', why: 'The coordinator has no such group (never created, or deleted).', d: 'The first heartbeat with epoch 0 creates it.' },
  'gs-PreparingRebalance': { t: 'Classic state PreparingRebalance', classic: true, spec: '§C1', why: 'A join, leave or timeout started a rebalance: the coordinator waits for every member\'s JoinGroup (the join phase).', d: 'It ends when all known members rejoined or the rebalance timeout passed.' },
  'gs-CompletingRebalance': { t: 'Classic state CompletingRebalance', classic: true, spec: '§C1', why: 'The join phase ended (new generation): the coordinator waits for the leader\'s SyncGroup with everyone\'s assignment.', d: 'Followers\' SyncGroups wait until the leader\'s arrives.' },
  'cs-unjoined': { t: 'Consumer unjoined', classic: true, spec: '§C2', why: 'The consumer is about to send JoinGroup (it just started, or must rejoin).', d: '' },
  'cs-joining': { t: 'Consumer joining', classic: true, spec: '§C2', why: 'Its JoinGroup is in flight: the coordinator answers when the join phase ends.', d: '' },
  'cs-awaiting_sync': { t: 'Consumer awaiting_sync', classic: true, spec: '§C3', why: 'It joined the new generation and waits for its assignment in the SyncGroup answer.', d: '' },
  'cs-stable': { t: 'Consumer stable', classic: true, spec: '§C4', why: 'It has its partitions and heartbeats; a REBALANCE_IN_PROGRESS answer would make it rejoin.', d: '' },
  'cs-revoking': { t: 'Consumer revoking', classic: true, spec: '§C2.2', why: 'A rebalance started: it gives up partitions (eager: all, cooperative: those that move) before it rejoins.', d: '' },
  'cs-stopped': { t: 'Consumer stopped', classic: true, spec: '§C4.3', why: 'Crashed, left or closed: it sends nothing; the coordinator removes it at LeaveGroup or the session timeout.', d: '' },
  'state-hash': { t: 'State hash', kip: '—', spec: 'explorer',
    d: 'Fingerprint of the simulation state. The same scenario, seed and actions give the same hash: a permalink is reproduced when its hash matches.' },
};

/** Installs one floating tooltip for every element with data-term="key". */
export function installTooltips(root = document.body) {
  const tip = document.createElement('div');
  tip.className = 'tooltip';
  tip.setAttribute('role', 'tooltip');
  document.body.append(tip);
  let current = null;
  const show = (el) => {
    if (el === current) return;
    current = el;
    if (!el) { tip.classList.remove('show'); return; }
    const g = GLOSSARY[el.dataset.term];
    if (!g) { tip.classList.remove('show'); return; }
    tip.innerHTML = `<b>${g.t}</b>${g.why ? `<p class="why" data-testid="tooltip-why">Why here: ${g.why}</p>` : ''}${g.d ? `<p>${g.d}</p>` : ''}<small>${g.classic ? `classic group protocol notes ${g.spec}` : `${g.kip ? `KIP-1071: ${g.kip} · ` : ''}spec ${g.spec}`}</small>`;
    const r = el.getBoundingClientRect();
    tip.classList.add('show');
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let x = Math.min(window.innerWidth - w - 8, Math.max(8, r.left));
    let y = r.bottom + 6;
    if (y + h > window.innerHeight - 8) y = Math.max(8, r.top - h - 6);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
  };
  root.addEventListener('mouseover', (e) => show(e.target.closest?.('[data-term]') ?? null));
  // Keyboard: a focused term (state badges are focusable) shows its tooltip too.
  root.addEventListener('focusin', (e) => show(e.target.closest?.('[data-term]') ?? null));
  root.addEventListener('focusout', () => show(null));
}
