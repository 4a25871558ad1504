/**
 * A job's side of flows: its children's results and failures, and dynamic children (a running
 * job that added children waits for them). The logic behind those Job methods. See docs/flows.md.
 */
import { JobNotFoundError, UnrecoverableError } from './errors.js';
import type { Job } from './job.js';
import { parseJson } from './job-json.js';
import { parseJobKey } from './job-key.js';
import { holderFence } from './job-manual.js';
import { throwOnMoveCode } from './write-codes.js';
import { unexpectedKind, type QueueBackend } from '../backend/backend.js';

/** Paging of one kind of dependency in `getDependencies` (BullMQ's `DependenciesOpts`). */
export interface DependencyPage {
  /** Where to continue (the `next...Cursor` of the previous call); 0 starts. */
  cursor?: number;
  /** About how many to return. Default 20. */
  count?: number;
}

/** Which dependencies `getDependencies` returns, page by page. Without options, all of them. */
export interface DependenciesOpts {
  processed?: DependencyPage;
  unprocessed?: DependencyPage;
  failed?: DependencyPage;
  /** Children that failed and that the parent let go of (BullMQ's `ignored`). */
  ignored?: DependencyPage;
}

/** A parent's children by outcome, keyed by their public keys (`<prefix>:<queue>:<id>`). */
export interface DependenciesResult {
  /** Completed children and their return values. */
  processed?: Record<string, unknown>;
  /** Children not finished yet (or failed with no policy: the parent waits for their retry). */
  unprocessed?: string[];
  /**
   * Children that failed for good and that the parent still accounts for: it waits for their
   * retry (no failure option), or failed because of them (failParentOnFailure).
   */
  failed?: string[];
  /** Children that failed for good and that the parent let go of (continueParentOnFailure, ignoreDependencyOnFailure), with their reasons. */
  ignored?: Record<string, string>;
  nextProcessedCursor?: number;
  nextUnprocessedCursor?: number;
  nextFailedCursor?: number;
  nextIgnoredCursor?: number;
}

/** Counts of a parent's children by outcome. */
export interface DependenciesCount {
  processed?: number;
  unprocessed?: number;
  failed?: number;
  /** Children the parent let go of after they failed (continueParentOnFailure, ignoreDependencyOnFailure). */
  ignored?: number;
}

function parseValues(raw: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) out[key] = parseJson(value);
  return out;
}

/** `job.getChildrenValues()`: the return values of completed children, by child key. */
export async function childrenValues(job: Job): Promise<Record<string, unknown>> {
  const id = job.requireId();
  await job.ctx.ready();
  return parseValues((await job.ctx.backend.getDependencies(id)).processed);
}

/**
 * `job.getFailedChildrenValues()`: the failed reasons of children that failed for good, by child
 * key, whatever their failure option (the ignored ones included).
 */
export async function failedChildrenValues(job: Job): Promise<Record<string, string>> {
  const id = job.requireId();
  await job.ctx.ready();
  const deps = await job.ctx.backend.getDependencies(id);
  return { ...deps.failed, ...deps.ignored };
}

/** `job.getIgnoredChildrenFailures()`: the failed reasons of the children the parent let go of, by child key. */
export async function ignoredChildrenFailures(job: Job): Promise<Record<string, string>> {
  const id = job.requireId();
  await job.ctx.ready();
  return (await job.ctx.backend.getDependencies(id)).ignored;
}

/** `job.getDependencies(opts)`: all dependencies, or pages of the kinds named in `opts`. */
export async function dependencies(job: Job, opts: DependenciesOpts = {}): Promise<DependenciesResult> {
  const id = job.requireId();
  await job.ctx.ready();
  const kinds = (['processed', 'unprocessed', 'failed', 'ignored'] as const).filter((kind) => opts[kind] !== undefined);
  if (kinds.length === 0) {
    const all = await job.ctx.backend.getDependencies(id);
    return { processed: parseValues(all.processed), unprocessed: all.unprocessed, failed: Object.keys(all.failed), ignored: all.ignored };
  }
  const result: DependenciesResult = {};
  for (const kind of kinds) {
    const page = opts[kind] as DependencyPage;
    const { cursor, items } = await job.ctx.backend.getDependencyPage(id, kind, String(page.cursor ?? 0), page.count ?? 20);
    const next = Number(cursor);
    if (kind === 'processed') {
      result.processed = parseValues(Object.fromEntries(items));
      result.nextProcessedCursor = next;
    } else if (kind === 'unprocessed') {
      result.unprocessed = items.map(([key]) => key);
      result.nextUnprocessedCursor = next;
    } else if (kind === 'ignored') {
      result.ignored = Object.fromEntries(items);
      result.nextIgnoredCursor = next;
    } else {
      result.failed = items.map(([key]) => key);
      result.nextFailedCursor = next;
    }
  }
  return result;
}

/** `job.getDependenciesCount(opts)`: counts of the kinds asked for (all without options). */
export async function dependenciesCount(
  job: Job,
  opts: { processed?: boolean; unprocessed?: boolean; failed?: boolean; ignored?: boolean } = {},
): Promise<DependenciesCount> {
  const id = job.requireId();
  await job.ctx.ready();
  const counts = await job.ctx.backend.getDependencyCounts(id);
  // No kind asked for means every kind (as BullMQ).
  const chosen = opts.processed || opts.unprocessed || opts.failed || opts.ignored;
  const result: DependenciesCount = {};
  for (const kind of ['processed', 'unprocessed', 'ignored', 'failed'] as const) if (!chosen || opts[kind]) result[kind] = counts[kind];
  return result;
}

/** `job.moveToWaitingChildren(token)`: true if the job now waits for pending children. */
export async function waitForChildren(job: Job, token: string | undefined): Promise<boolean> {
  const id = job.requireId();
  const fence = holderFence(job, token, 'move to waiting-children');
  await job.ctx.ready();
  const result = await job.ctx.backend.moveToWaitingChildren(id, fence, job.ctx.clock.backendNow());
  switch (result.kind) {
    case 'moved':
      return true;
    case 'nothingPending':
      return false;
    case 'childFailed':
      throw new UnrecoverableError(result.reason);
    case 'refused':
      throwOnMoveCode(job, result.code, 'move to waiting-children', 'moveToWaitingChildren', true);
      return false;
    default:
      return unexpectedKind(result);
  }
}

/** How deep removeUnprocessedChildren follows grandchildren (flows deeper than this are refused at add). */
const MAX_DEPTH = 64;

/**
 * `job.removeUnprocessedChildren()`: removes the children the job still waits for (not active,
 * not finished), and theirs first. Each removal is job.remove()'s: the parent stops waiting for
 * the child (and moves on once nothing is pending). Active children and finished ones stay.
 * Returns how many jobs were removed.
 */
export async function removeUnprocessed(job: Job): Promise<number> {
  const id = job.requireId();
  await job.ctx.ready();
  const siblings = new Map<string, QueueBackend>([[job.queueName, job.ctx.backend]]);
  const backendFor = (queue: string): QueueBackend => {
    let backend = siblings.get(queue);
    if (!backend) siblings.set(queue, (backend = job.ctx.backend.sibling(queue)));
    return backend;
  };
  const now = () => job.ctx.clock.backendNow();
  const removeUnder = async (backend: QueueBackend, parentId: string, depth: number): Promise<number> => {
    let removed = 0;
    const pending: string[] = [];
    let cursor = '0';
    do {
      const page = await backend.getDependencyPage(parentId, 'unprocessed', cursor, 1000);
      for (const [key] of page.items) pending.push(key);
      cursor = page.cursor;
    } while (cursor !== '0');
    for (const key of pending) {
      const child = parseJobKey(job.ctx.prefix, key);
      if (!child) continue;
      const childBackend = backendFor(child.queue);
      const state = await childBackend.getState(child.id);
      // Active and finished children stay (a failed child the parent still waits for: its retry
      // unblocks the parent); so do missing ones and pending scheduler runs.
      if (state === 'active' || state === 'completed' || state === 'failed' || state === 'unknown') continue;
      if (state === 'waiting-children' && depth < MAX_DEPTH) removed += await removeUnder(childBackend, child.id, depth + 1);
      if ((await childBackend.removeJob(child.id, now())).kind === 'removed') removed++;
    }
    return removed;
  };
  return removeUnder(job.ctx.backend, id, 0);
}

/**
 * `job.removeChildDependency()`: the parent stops waiting for this pending child (and moves on if
 * it was its last); the child stays, without a parent. False when there is none to let go.
 */
export async function letParentGo(job: Job): Promise<boolean> {
  const id = job.requireId();
  await job.ctx.ready();
  const { kind } = await job.ctx.backend.removeChildDependency(id);
  switch (kind) {
    case 'missing':
      throw new JobNotFoundError(`Missing key for job ${id}. removeChildDependency: job ${id} does not exist in queue "${job.queueName}".`);
    case 'parentMissing':
      throw new JobNotFoundError(
        `Missing key for parent job ${job.parentKey ?? '(unknown)'}. removeChildDependency: the parent of job ${id} no longer exists.`,
      );
    case 'notPending':
      return false;
    case 'removed':
      job.parent = undefined;
      job.parentKey = undefined;
      return true;
    default:
      return unexpectedKind(kind);
  }
}
