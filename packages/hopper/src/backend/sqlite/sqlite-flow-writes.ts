/**
 * The flow writes of the SQLite backend, each run inside one transaction: addFlow, sealParent,
 * moveToWaitingChildren, removeChildDependency (contracts: the Lua scripts of the same names).
 */
import { checkGroupCaps, groupOfOpts } from './sqlite-groups.js';
import { readLimits } from './sqlite-limits.js';
import type {
  AddFlowResult,
  AddRequest,
  ChildDependencyResult,
  ChildFailurePolicy,
  Fence,
  FlowNodeWrite,
  FlowOutcome,
  SealParentResult,
  WaitChildrenResult,
} from '../backend.js';
import { WriteCode } from '../requests.js';
import { addDependency, childRemoved, hasPending, releaseParent } from './sqlite-flows.js';
import type { Tx } from './sqlite-ops.js';

/** A child's failure policy as the `policy` column stores it (the letters of the Redis parent link). */
const POLICY_LETTERS: Readonly<Record<ChildFailurePolicy, string>> = { none: '', fail: 'f', continue: 'c', ignore: 'i', remove: 'r' };

/**
 * Adds trees of jobs across queues atomically (addFlow.lua): nodes in pre-order, a node's parent
 * an earlier node (parentIndex) or, for a top-level node, an existing job. A top-level node whose
 * custom id exists is a duplicate (it and its subtree are skipped); any other existing node
 * refuses the whole call, as does an existing parent that is missing or finished.
 */
export function addFlow(tx: Tx, nodes: FlowNodeWrite[], request: AddRequest | undefined): AddFlowResult {
  const previous = tx.previousResult<AddFlowResult>(request);
  if (previous) return previous;
  const txs = nodes.map((node) => tx.on(tx.queueIdOf(node.queue)));
  // First pass: each node's fate, before writing anything.
  const fate: ('new' | 'duplicate' | 'skipped')[] = [];
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (node.parentIndex > 0 && fate[node.parentIndex - 1] !== 'new') {
      fate.push('skipped');
    } else if (node.customId !== '' && txs[i].exists(node.customId)) {
      if (node.parentIndex > 0) return { now: tx.now, ok: false, reason: 'exists', index: i };
      fate.push('duplicate');
    } else {
      fate.push('new');
      if (node.parentIndex === 0 && node.parent) {
        const parent = tx.on(tx.queueIdOf(node.parent.queue)).job(node.parent.id);
        if (!parent || parent.state === 'completed' || parent.state === 'failed') {
          return { now: tx.now, ok: false, reason: 'parent', index: i, state: parent?.state ?? 'missing' };
        }
      }
    }
  }
  const hasChildren = new Set<number>();
  nodes.forEach((node, i) => {
    if (fate[i] === 'new' && node.parentIndex > 0) hasChildren.add(node.parentIndex - 1);
  });
  refuseFlowPastGroupCaps(nodes, txs, fate, hasChildren);
  const { prefix } = tx.queue();
  const ids: string[] = [];
  const outcomes: FlowOutcome[] = [];
  const added = new Map<Tx, { ids: string[]; names: string[]; states: string[]; dues: number[] }>();
  nodes.forEach((node, i) => {
    const ntx = txs[i];
    if (fate[i] !== 'new') {
      ids.push(node.customId);
      outcomes.push(fate[i] === 'duplicate' ? 'duplicated' : 'skipped');
      return;
    }
    const id = node.customId !== '' ? node.customId : ntx.nextJobId();
    ids.push(id);
    outcomes.push('added');
    // The parent: a node of this call, or an existing job.
    let parent: { tx: Tx; id: string } | undefined;
    if (node.parentIndex > 0) parent = { tx: txs[node.parentIndex - 1], id: ids[node.parentIndex - 1] };
    else if (node.parent) parent = { tx: tx.on(tx.queueIdOf(node.parent.queue)), id: node.parent.id };
    let opts = node.opts;
    if (parent && node.parentIndex > 0) {
      // As in BullMQ, the options name the parent (a processor reads job.parent from them).
      const parentJson = JSON.stringify({ id: parent.id, queue: `${prefix}:${parent.tx.queue().name}` });
      opts = opts === '' ? `{"parent":${parentJson}}` : `${opts.slice(0, -1)},"parent":${parentJson}}`;
    }
    const waits = hasChildren.has(i) || !node.sealed;
    ntx.s
      .stmt(
        `INSERT INTO jobs (qid, id, name, data, opts, state, ts, priority, delay, parent_qid, parent_id, policy, unsealed)
         VALUES (?, ?, ?, ?, ?, 'waiting-children', ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        ntx.qid,
        id,
        node.name,
        node.data,
        opts,
        node.timestamp === 0 ? tx.now : node.timestamp,
        node.priority,
        node.delay > 0 ? node.delay : 0,
        parent ? parent.tx.qid : null,
        parent ? parent.id : null,
        POLICY_LETTERS[node.policy],
        node.sealed ? 0 : 1,
      );
    const group = groupOfOpts(node.opts);
    if (group) ntx.set(id, { grp: group.id });
    if (parent) addDependency(parent.tx, parent.id, ntx.publicKey(id), ntx.qid, id);
    let state: string;
    let due = 0;
    if (waits) {
      state = 'waiting-children';
      ntx.set(id, { score: tx.now });
    } else if (node.delay > 0) {
      due = tx.now + node.delay;
      ntx.pushDelayed(id, due);
      state = 'delayed';
    } else {
      // lifo puts an unprioritized job first (as addJobs).
      state = ntx.pushReady(id, node.priority, node.lifo && node.priority === 0);
      ntx.signalWork();
    }
    let events = added.get(ntx);
    if (!events) added.set(ntx, (events = { ids: [], names: [], states: [], dues: [] }));
    events.ids.push(id);
    events.names.push(node.name);
    events.states.push(state);
    events.dues.push(due);
  });
  for (const [ntx, events] of added) {
    ntx.emit('added', {
      ids: JSON.stringify(events.ids),
      names: JSON.stringify(events.names),
      states: JSON.stringify(events.states),
      delays: JSON.stringify(events.dues),
    });
  }
  const result: AddFlowResult = { now: tx.now, ok: true, ids, outcomes };
  tx.recordResult(request, result);
  return result;
}

/** Ends the chunked add of a parent: sealed (still waiting), released (sealed and moved on), alreadySealed, missing. */
export function sealParent(tx: Tx, id: string): SealParentResult {
  const row = tx.job(id);
  if (!row) return { kind: 'missing' };
  if (row.unsealed === 0) return { kind: 'alreadySealed' };
  tx.set(id, { unsealed: 0 });
  releaseParent(tx, id);
  return { kind: tx.job(id)?.state === 'waiting-children' ? 'sealed' : 'released' };
}

/**
 * The holder of an active job that added children moves it to waiting-children while any is
 * pending (the fence is checked by the caller): moved; nothingPending (or a
 * continueParentOnFailure child failed); childFailed (a failParentOnFailure child failed: reason); refused.
 */
export function moveToWaitingChildren(tx: Tx, id: string, fence: Fence): WaitChildrenResult {
  const row = tx.job(id);
  if (!row || row.state !== 'active') return { kind: 'refused', code: WriteCode.NotActive };
  if (row.cancel_reason !== null) return { kind: 'refused', code: WriteCode.RefusedCancelled };
  if (row.fail_mark !== null) return { kind: 'childFailed', reason: row.fail_mark };
  if (row.continue_flag === 1) {
    tx.set(id, { continue_flag: 0 });
    return { kind: 'nothingPending' };
  }
  if (!hasPending(tx, id)) return { kind: 'nothingPending' };
  // No holder while it waits; a parent's own delay applies once, after its first children.
  tx.set(id, { state: 'waiting-children', score: tx.now, delay: 0, token: null, moved_token: fence.token });
  tx.emit('waiting-children', { jobId: id, prev: 'active' });
  return { kind: 'moved' };
}

/** A pending child's parent lets go of it: removed, notPending (no parent, or not pending), missing (the child), parentMissing. */
export function removeChildDependency(tx: Tx, id: string): ChildDependencyResult {
  const row = tx.job(id);
  if (!row) return { kind: 'missing' };
  if (row.parent_id === null || row.parent_qid === null) return { kind: 'notPending' };
  const ptx = tx.on(row.parent_qid);
  if (!ptx.exists(row.parent_id)) return { kind: 'parentMissing' };
  const ck = tx.publicKey(id);
  const pending = ptx.s.stmt('SELECT pending FROM deps WHERE qid = ? AND id = ? AND child_key = ?').get(ptx.qid, row.parent_id, ck) as
    { pending: number } | undefined;
  if (pending?.pending !== 1) return { kind: 'notPending' };
  tx.set(id, { parent_qid: null, parent_id: null, policy: '' });
  childRemoved(ptx, row.parent_id, ck);
  return { kind: 'removed' };
}

/** Refuses (before any write) a flow whose new ready grouped jobs would take a group past its backlog cap. */
function refuseFlowPastGroupCaps(nodes: FlowNodeWrite[], txs: Tx[], fate: string[], hasChildren: Set<number>): void {
  const byQueue = new Map<Tx, { group: string; maxSize: number | undefined }[]>();
  nodes.forEach((node, i) => {
    const group = groupOfOpts(node.opts);
    if (!group || fate[i] !== 'new' || hasChildren.has(i) || !node.sealed || node.delay > 0) return;
    let adds = byQueue.get(txs[i]);
    if (!adds) byQueue.set(txs[i], (adds = []));
    adds.push({ group: group.id, maxSize: group.maxSize });
  });
  for (const [ntx, adds] of byQueue) checkGroupCaps(ntx, adds, readLimits(ntx.s, ntx.qid));
}
