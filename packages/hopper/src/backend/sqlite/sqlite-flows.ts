/**
 * Flows in the SQLite backend: parents and their children (the counterpart of includes/flow.lua
 * and includes/tree.lua). A parent waits in `waiting-children` while it has pending children;
 * its dependency records are rows of `deps` (one per child key: pending, and its result, failure
 * or ignored failure). A child names its parent (`parent_qid`, `parent_id`) and its failure
 * policy ('f' fail the parent, 'c' continue it, 'i' ignore, 'r' remove the dependency, '' the
 * parent queue's `childFailure`: fail, or wait with the failure recorded).
 */
import type { Tx, JobRow } from './sqlite-ops.js';
import type { RemoveJobResult } from '../backend.js';
import { failKeepOf } from './sqlite-ops.js';
import { deadLetter } from './sqlite-deadletters.js';

const POLICY_NAMES: Record<string, string> = {
  f: 'failParentOnFailure',
  c: 'continueParentOnFailure',
  i: 'ignoreDependencyOnFailure',
  r: 'removeDependencyOnFailure',
  w: 'wait',
};

/** Most child records a tree removed in one call may hold (as TREE_MAX in includes/tree.lua). */
export const TREE_MAX = 1000;

interface DepRow {
  child_key: string;
  child_qid: number;
  child_id: string;
  pending: number;
  processed: string | null;
  failed: string | null;
  ignored: string | null;
}

function dep(ptx: Tx, pid: string, ck: string): DepRow | undefined {
  return ptx.s.stmt('SELECT * FROM deps WHERE qid = ? AND id = ? AND child_key = ?').get(ptx.qid, pid, ck) as DepRow | undefined;
}

function setDep(ptx: Tx, pid: string, ck: string, fields: Record<string, string | number | null>): void {
  const names = Object.keys(fields);
  ptx.s
    .stmt(`UPDATE deps SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE qid = ? AND id = ? AND child_key = ?`)
    .run(...names.map((n) => fields[n]), ptx.qid, pid, ck);
  // A record with nothing left to say is dropped.
  ptx.s
    .stmt(
      'DELETE FROM deps WHERE qid = ? AND id = ? AND child_key = ? AND pending = 0 AND processed IS NULL AND failed IS NULL AND ignored IS NULL',
    )
    .run(ptx.qid, pid, ck);
}

/** Whether parent `pid` still waits for a child (an index lookup, however many children it has). */
export function hasPending(ptx: Tx, pid: string): boolean {
  return ptx.s.stmt('SELECT 1 FROM deps WHERE qid = ? AND id = ? AND pending = 1 LIMIT 1').get(ptx.qid, pid) !== undefined;
}

/** Records that child `ck` waits for parent `pid` (a new dependency). */
export function addDependency(ptx: Tx, pid: string, ck: string, childQid: number, childId: string): void {
  ptx.s
    .stmt(
      `INSERT INTO deps (qid, id, child_key, child_qid, child_id, pending) VALUES (?, ?, ?, ?, ?, 1)
       ON CONFLICT (qid, id, child_key) DO UPDATE SET pending = 1, child_qid = excluded.child_qid, child_id = excluded.child_id`,
    )
    .run(ptx.qid, pid, ck, childQid, childId);
}

/** Moves parent `pid` (in waiting-children) on: delayed by its own delay, else ready. */
function moveParentOn(ptx: Tx, parent: JobRow): void {
  ptx.set(parent.id, { continue_flag: 0 });
  if (parent.delay > 0) {
    const due = ptx.now + parent.delay;
    ptx.pushDelayed(parent.id, due);
    ptx.emit('delayed', { jobId: parent.id, delay: due, prev: 'waiting-children' });
  } else {
    const state = ptx.pushReady(parent.id, parent.priority, false);
    ptx.signalWork();
    ptx.emit('waiting', { jobId: parent.id, prev: 'waiting-children', state });
  }
}

/** Releases a sealed parent in waiting-children once nothing blocks it. */
export function releaseParent(ptx: Tx, pid: string): void {
  const parent = ptx.job(pid);
  if (!parent || parent.state !== 'waiting-children' || parent.unsealed === 1) return;
  if (parent.continue_flag === 1 || !hasPending(ptx, pid)) moveParentOn(ptx, parent);
}

/** A child completed with return value `rv`: record it, release the parent if it was the last. */
function childCompleted(ptx: Tx, pid: string, ck: string, rv: string): void {
  if (dep(ptx, pid, ck)?.pending !== 1) return;
  setDep(ptx, pid, ck, { pending: 0, processed: rv, failed: null });
  releaseParent(ptx, pid);
}

/** A child was removed (explicitly, by clean, drain or retention): it no longer blocks its parent. */
export function childRemoved(ptx: Tx, pid: string, ck: string): void {
  if (dep(ptx, pid, ck)?.pending !== 1) return;
  setDep(ptx, pid, ck, { pending: 0, failed: null });
  releaseParent(ptx, pid);
}

/** Fails parent `pid` because a child with failParentOnFailure failed (see failParent in includes/flow.lua). */
function failParent(ptx: Tx, pid: string, reason: string, depth: number): void {
  const parent = ptx.job(pid);
  if (!parent || parent.state === 'completed' || parent.state === 'failed') return;
  if (parent.state !== 'waiting-children') {
    // A dynamic parent not waiting yet: its moveToWaitingChildren fails it.
    ptx.set(pid, { fail_mark: reason });
    return;
  }
  ptx.set(pid, { unsealed: 0, continue_flag: 0 });
  ptx.releaseDedup(parent);
  const made = parent.attempts_made;
  // Counted in the parent's own queue (countOutcome's onBase in includes/flow.lua).
  if (deadLetter(ptx, parent, made, reason)) ptx.count('dead-lettered', parent.name);
  ptx.count('failed', parent.name);
  const kept = ptx.finish(pid, 'failed', failKeepOf(parent.opts, { kind: 'keep' }), { failed_reason: reason, attempts_made: made });
  ptx.emit('failed', { jobId: pid, failedReason: reason, prev: 'waiting-children', attemptsMade: made });
  if (parent.parent_id !== null && parent.parent_qid !== null && depth < 64) {
    childFailed(ptx, pid, ptx.on(parent.parent_qid), parent.parent_id, parent.policy, reason, depth + 1, !kept);
  }
}

/** Child `id` (of `ctx`'s queue) failed for good with `reason`; `gone`: it was deleted at once (removeOnFail). */
function childFailed(ctx: Tx, id: string, ptx: Tx, pid: string, policy: string, reason: string, depth: number, gone: boolean): void {
  const ck = ctx.publicKey(id);
  if (dep(ptx, pid, ck)?.pending !== 1) return;
  let p = policy;
  if (p === '') p = ptx.queue().childFailure === 'fail' ? 'f' : 'w';
  ptx.emit('child-failed', { jobId: pid, childKey: ck, failedReason: reason, policy: POLICY_NAMES[p] ?? p });
  if (p === 'w' && gone) {
    // Like a removed child (as in BullMQ), it no longer blocks its parent.
    setDep(ptx, pid, ck, { pending: 0, failed: null });
    releaseParent(ptx, pid);
    return;
  }
  if (p === 'c' || p === 'i') setDep(ptx, pid, ck, { ignored: reason });
  else if (p !== 'r') setDep(ptx, pid, ck, { failed: reason });
  if (p === 'w') return;
  if (p === 'f') {
    failParent(ptx, pid, `child ${ck} failed: ${reason}`, depth);
    return;
  }
  setDep(ptx, pid, ck, { pending: 0 });
  if (p === 'c') ptx.set(pid, { continue_flag: 1 });
  releaseParent(ptx, pid);
}

/**
 * For the operations that end a job for good: applies its parent's side (`row` as read before
 * the job ended). `outcome` 'completed' (value: return value) or 'failed' (value: reason);
 * `gone`: a failed child deleted at once.
 */
export function notifyParent(tx: Tx, row: JobRow, outcome: 'completed' | 'failed', value: string, gone = false): void {
  if (row.parent_id === null || row.parent_qid === null) return;
  const ptx = tx.on(row.parent_qid);
  if (outcome === 'completed') childCompleted(ptx, row.parent_id, tx.publicKey(row.id), value);
  else childFailed(tx, row.id, ptx, row.parent_id, row.policy, value, 0, gone);
}

/** A retried child whose parent recorded its outcome is pending for that parent again (as in BullMQ). */
export function restoreDependency(tx: Tx, row: JobRow, state: 'completed' | 'failed'): void {
  if (row.parent_id === null || row.parent_qid === null) return;
  const ptx = tx.on(row.parent_qid);
  if (!ptx.exists(row.parent_id)) return;
  const ck = tx.publicKey(row.id);
  const d = dep(ptx, row.parent_id, ck);
  if (!d) return;
  const recorded = state === 'completed' ? d.processed !== null : d.failed !== null || d.ignored !== null;
  if (!recorded) return;
  if (state === 'completed') setDep(ptx, row.parent_id, ck, { processed: null, pending: 1 });
  else setDep(ptx, row.parent_id, ck, { failed: null, ignored: null, pending: 1 });
}

/** A node of a tree to remove: its queue's transaction, id and state. */
export interface TreeNode {
  tx: Tx;
  id: string;
  state: string;
  key: string;
}

/**
 * Reads the tree under job `id` (its flow descendants in any queue, while their parent link still
 * names their parent), writing nothing. Returns its nodes (the job first, parents before
 * children), or a code and detail: -6 a descendant is active (its key), -7 more than TREE_MAX child records.
 */
export function readTree(tx: Tx, id: string, state: string): TreeNode[] | RemoveJobResult {
  const nodes: TreeNode[] = [{ tx, id, state, key: tx.publicKey(id) }];
  let records = 0;
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    const children = node.tx.s
      .stmt('SELECT child_key, child_qid, child_id FROM deps WHERE qid = ? AND id = ?')
      .all(node.tx.qid, node.id) as {
      child_key: string;
      child_qid: number;
      child_id: string;
    }[];
    records += children.length;
    if (records > TREE_MAX) return { kind: 'treeTooLarge', limit: TREE_MAX };
    for (const c of children) {
      const ctx = node.tx.on(c.child_qid);
      const child = ctx.job(c.child_id);
      if (!child || child.parent_id !== node.id || child.parent_qid !== node.tx.qid) continue;
      if (child.state === 'active') return { kind: 'descendantActive', key: c.child_key };
      nodes.push({ tx: ctx, id: c.child_id, state: child.state, key: c.child_key });
    }
  }
  return nodes;
}

/** Removes a tree read by readTree: each job emits `removed` in its queue; the root's own parent stops waiting for it. */
export function removeTree(nodes: TreeNode[]): void {
  const root = nodes[0];
  const rootRow = root.tx.job(root.id);
  for (const node of nodes) {
    const row = node.tx.job(node.id);
    if (!row) continue;
    node.tx.releaseDedup(row, false);
    node.tx.releaseTtlDedup(row);
    node.tx.deleteJob(node.id);
    node.tx.emit('removed', { jobId: node.id, prev: node.state });
  }
  if (rootRow && rootRow.parent_id !== null && rootRow.parent_qid !== null)
    childRemoved(root.tx.on(rootRow.parent_qid), rootRow.parent_id, root.key);
}
