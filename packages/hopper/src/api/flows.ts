/**
 * What Queue and FlowProducer share about flows: turning a job and its parent link into a flow
 * node for the backend, explaining a refused add, checking Redis Cluster slots, and cancelling a
 * cancelled parent's pending children (recursively, in batches).
 */
import type { AddFlowResult, ChildFailurePolicy, FlowNodeWrite, QueueBackend, Retention } from '../backend/backend.js';
import { CrossSlotError, FlowConflictError, InvalidOptionsError, JobNotFoundError } from '../job/errors.js';
import { parseJobKey, queueOfQualifiedName } from '../job/job-key.js';
import { toNewJob } from '../job/new-job.js';
import type { JobsOptions } from '../job/options.js';

/** Most nodes one flow call writes (DESIGN: bounded work per script call). */
export const FLOW_CHUNK = 1000;

/** Children of a cancelled parent cancelled per batch. */
const CANCEL_BATCH = 500;

/** The failure policy a child's options choose (at most one is set: validated before). */
export function policyOf(opts: JobsOptions): ChildFailurePolicy {
  if (opts.failParentOnFailure) return 'fail';
  if (opts.continueParentOnFailure) return 'continue';
  if (opts.ignoreDependencyOnFailure) return 'ignore';
  if (opts.removeDependencyOnFailure) return 'remove';
  return 'none';
}

/** The queue and id of `opts.parent`, checked against `prefix`. */
export function resolveParent(prefix: string, parent: { id: string; queue: string }): { queue: string; id: string } {
  const queue = queueOfQualifiedName(prefix, parent.queue);
  if (queue === undefined) {
    throw new InvalidOptionsError(
      `parent.queue "${parent.queue}" is not a queue under the prefix "${prefix}": pass the parent's job.queueQualifiedName ("${prefix}:<queue>"). Parents and children share one prefix.`,
    );
  }
  return { queue, id: parent.id };
}

/** A flow node for the backend: job `name`/`data` with its merged options, in queue `queue`. */
export function toFlowNode(
  prefix: string,
  queue: string,
  name: string,
  data: unknown,
  opts: JobsOptions,
  parentIndex: number,
  sealed: boolean,
): FlowNodeWrite {
  if (opts.deduplication) {
    throw new InvalidOptionsError(
      `Job "${name}" in a flow cannot use deduplication: only a flow of one job (no children, no parent) can. Give it a jobId instead, which makes re-adds idempotent.`,
    );
  }
  return {
    ...toNewJob(name, data, opts),
    queue,
    parentIndex,
    parent: parentIndex === 0 && opts.parent ? resolveParent(prefix, opts.parent) : undefined,
    policy: policyOf(opts),
    sealed,
  };
}

/**
 * Throws the typed error for an add the backend refused (nothing was written). With `prefix`,
 * a refused parent's message starts with BullMQ's key phrase (`Missing key for parent job
 * <key>. addJob`, `The parent job <key> cannot be replaced. addJob`).
 */
export function explainRefusal(result: AddFlowResult, nodes: FlowNodeWrite[], prefix?: string): void {
  if (result.ok) return;
  const node = nodes[result.index];
  if (result.reason === 'exists') {
    throw new FlowConflictError(
      `Job "${node.customId}" already exists in queue "${node.queue}", but its parent in this flow is new: a child cannot be shared. ` +
        'Nothing was written. Give the child another jobId, or remove the existing job first.',
    );
  }
  const parent = node.parent ?? { queue: '?', id: '?' };
  const key = prefix === undefined ? undefined : `${prefix}:${parent.queue}:${parent.id}`;
  if (result.state === 'missing') {
    throw new JobNotFoundError(
      `${key === undefined ? '' : `Missing key for parent job ${key}. addJob: `}` +
        `The parent job ${parent.id} of queue "${parent.queue}" does not exist, so job "${node.name}" cannot become its child. Nothing was written.`,
    );
  }
  throw new FlowConflictError(
    `${key === undefined ? '' : `The parent job ${key} cannot be replaced. addJob: `}` +
      `The parent job ${parent.id} of queue "${parent.queue}" is already ${result.state}, so job "${node.name}" cannot become its child. Nothing was written.`,
  );
}

/** In Redis Cluster, every queue of a flow must share the routing queue's slot. */
export function checkFlowSlots(backend: QueueBackend, queues: Iterable<string>): void {
  if (!backend.isCluster) return;
  for (const queue of queues) {
    if (!backend.sharesSlotWith(queue)) {
      throw new CrossSlotError(
        `Queues "${backend.queueName}" and "${queue}" are in different Redis Cluster slots, so a flow across them cannot be written atomically. ` +
          `Put them under one hash tag: give the FlowProducer, Queues and Workers a prefix containing a tag, e.g. prefix: '{app}'.`,
      );
    }
  }
}

/**
 * Cancels the pending children of a parent just cancelled (the cancel script set them aside),
 * and theirs, depth first, `CANCEL_BATCH` at a time. Children already finished are untouched.
 * Returns how many jobs were cancelled or signalled.
 */
export async function cancelChildren(
  prefix: string,
  backendFor: (queue: string) => QueueBackend,
  queue: string,
  id: string,
  reason: string,
  now: () => number | undefined,
): Promise<number> {
  const keep: Retention = { kind: 'keep' };
  const stack = [{ queue, id }];
  let cancelled = 0;
  while (stack.length > 0) {
    const parent = stack[stack.length - 1];
    const keys = await backendFor(parent.queue).takeChildrenToCancel(parent.id, CANCEL_BATCH);
    if (keys.length === 0) {
      stack.pop();
      continue;
    }
    for (const key of keys) {
      const child = parseJobKey(prefix, key);
      if (!child) continue;
      const result = await backendFor(child.queue).cancelJob(child.id, reason, keep, now());
      if (result.kind === 'cancelled' || result.kind === 'signalled') {
        cancelled++;
        stack.push(child);
      }
    }
  }
  return cancelled;
}
