/**
 * Turns a BullMQ job, as readJobs (bullmq-scripts.ts) returns it, into the job Hopper writes
 * (ImportedJob), or says why it cannot move. BullMQ's job hash: `name`, `data` (JSON), `opts`
 * (JSON, a few options under short names), `timestamp`, `delay`, `priority`, `atm` / `ats` / `stc`
 * (attempts made / started, stalls), `processedOn`, `finishedOn`, `returnvalue`, `failedReason`,
 * `stacktrace` (JSON array), `progress`, `pb` (processedBy), `parentKey` and `parent` (JSON: id,
 * queueKey and the failure policy flags), `deid` (deduplication id), `defa` (a deferred failure).
 */
import type { ChildFailurePolicy, ImportedJob, ImportedState } from '../backend/backend.js';
import { publicJobKey } from '../job/job-key.js';
import { validateJobOptions } from '../job/options.js';
import { DELAYED_SCORE_SHIFT, parseBullJobKey } from './bullmq-keys.js';

/** Where a taken job was, as the take script recorded it. */
export interface MovingInfo {
  /** The state it becomes in Hopper ('stalled': an active job whose lock was gone). */
  s: ImportedState | 'stalled' | 'scheduled';
  /** Its score in BullMQ's sorted set ('' for a list). */
  sc: string;
}

/** The raw read of one job (readJobs' reply row). */
export type RawJob = [string | null, string[], string[], number, string[], string[], string[], string[], string | null, number];

/** BullMQ's short option names and Hopper's (BullMQ's public ones). */
const LONG_NAMES: Record<string, string> = {
  de: 'deduplication',
  fpof: 'failParentOnFailure',
  cpof: 'continueParentOnFailure',
  idof: 'ignoreDependencyOnFailure',
  kl: 'keepLogs',
  rdof: 'removeDependencyOnFailure',
};

/** Options a stored job carries that are the job's own record, not options to validate. */
const RECORD_ONLY = ['jobId', 'timestamp', 'delay', 'parent', 'repeat', 'prevMillis', 'repeatJobKey', 'telemetry'];

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

function num(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** A job that moves, or why it cannot. */
export type Translated = { ok: true; job: ImportedJob; logsDropped: number } | { ok: false; why: string };

export interface TranslateContext {
  /** BullMQ's prefix and queue, Hopper's prefix. */
  bullPrefix: string;
  queue: string;
  hopperPrefix: string;
  /** The time of the read (ms, BullMQ's Redis clock): a deferred failure is recorded then. */
  now: number;
}

function policyOf(parent: Record<string, unknown>, opts: Record<string, unknown>): ChildFailurePolicy {
  if (parent.fpof || opts.failParentOnFailure) return 'fail';
  if (parent.cpof || opts.continueParentOnFailure) return 'continue';
  if (parent.idof || opts.ignoreDependencyOnFailure) return 'ignore';
  if (parent.rdof || opts.removeDependencyOnFailure) return 'remove';
  return 'none';
}

/** BullMQ key `prefix:queue:id` -> Hopper public key `hopperPrefix:queue:id`. */
export function hopperKeyOf(ctx: TranslateContext, bullKey: string): string | undefined {
  const parsed = parseBullJobKey(ctx.bullPrefix, bullKey);
  return parsed && publicJobKey(ctx.hopperPrefix, parsed.queue, parsed.id);
}

/** Translates one job read by readJobs; `id` its id. */
export function translateJob(ctx: TranslateContext, id: string, raw: RawJob): Translated {
  const [infoJson, flat, logs, logCount, deps, processed, failed, unsuccessful, dedupHolder, dedupPttl] = raw;
  if (!infoJson) return { ok: false, why: 'no longer in the moving set' };
  const info = JSON.parse(infoJson) as MovingInfo;
  const h = pairs(flat);
  if (h.name === undefined) return { ok: false, why: 'its hash is gone' };
  let stored: Record<string, unknown>;
  try {
    stored = h.opts ? (JSON.parse(h.opts) as Record<string, unknown>) : {};
  } catch {
    return { ok: false, why: 'its options are not valid JSON' };
  }
  const opts: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stored)) opts[LONG_NAMES[key] ?? key] = value;
  if (opts.parent && typeof opts.parent === 'object') {
    const p = opts.parent as { id?: string; queue?: string };
    const queue = p.queue?.startsWith(`${ctx.bullPrefix}:`) ? p.queue.slice(ctx.bullPrefix.length + 1) : p.queue;
    opts.parent = { id: p.id, queue: `${ctx.hopperPrefix}:${queue}` };
  }
  // Hopper's validation layer judges the options (a custom backoff type is the worker's to know).
  const checked: Record<string, unknown> = { ...opts };
  for (const key of RECORD_ONLY) delete checked[key];
  try {
    const backoff = checked.backoff as { type?: unknown } | undefined;
    const custom = backoff && typeof backoff.type === 'string' ? [backoff.type] : [];
    validateJobOptions(checked, custom);
  } catch (err) {
    return { ok: false, why: `Hopper refuses its options: ${(err as Error).message}` };
  }
  if (h.data !== undefined) {
    try {
      JSON.parse(h.data);
    } catch {
      return { ok: false, why: 'its data is not valid JSON' };
    }
  }
  const priority = num(h.priority) ?? 0;
  let state: ImportedState;
  let due: number | undefined;
  let front = false;
  let stalls = num(h.stc) ?? 0;
  switch (info.s) {
    case 'stalled':
      state = priority > 0 ? 'prioritized' : 'waiting';
      front = true;
      stalls += 1;
      break;
    case 'delayed':
      state = 'delayed';
      due = Math.floor(Number(info.sc) / DELAYED_SCORE_SHIFT);
      break;
    case 'scheduled':
      return { ok: false, why: 'a scheduler occurrence (it becomes the scheduler’s next one)' };
    default:
      state = info.s;
  }
  if (state === 'waiting' && priority > 0) state = 'prioritized';
  const job: ImportedJob = {
    id,
    name: h.name,
    data: h.data ?? '{}',
    opts: Object.keys(opts).length === 0 ? '' : JSON.stringify(opts),
    timestamp: num(h.timestamp) ?? ctx.now,
    state,
    priority,
    delay: num(h.delay) ?? 0,
    attemptsMade: num(h.atm) ?? num(h.attemptsMade) ?? 0,
    attemptsStarted: num(h.ats) ?? 0,
    stalledCounter: stalls,
    logs,
  };
  if (due !== undefined) job.due = due;
  if (front) job.front = true;
  const processedOn = num(h.processedOn);
  if (processedOn !== undefined) job.processedOn = processedOn;
  const finishedOn = num(h.finishedOn);
  if (finishedOn !== undefined && (state === 'completed' || state === 'failed')) job.finishedOn = finishedOn;
  if (state === 'completed' && h.returnvalue !== undefined) job.returnValue = h.returnvalue;
  if (h.failedReason !== undefined) job.failedReason = h.failedReason;
  if (h.stacktrace !== undefined) job.stacktrace = h.stacktrace;
  if (h.progress !== undefined) job.progress = h.progress;
  if (h.pb !== undefined) job.processedBy = h.pb;
  // A deferred failure (a stall past the limit, a failed child with failParentOnFailure): BullMQ
  // fails the job when a worker next takes it. It moves failed, with that reason.
  if (h.defa !== undefined && state !== 'completed' && state !== 'failed') {
    job.state = 'failed';
    job.failedReason = h.defa;
    job.finishedOn = ctx.now;
    delete job.due;
    delete job.front;
  }
  if (h.deid !== undefined && dedupHolder === id && dedupPttl !== -2) {
    job.dedup = { id: h.deid, ttlMs: dedupPttl > 0 ? dedupPttl : 0 };
  }
  if (h.parentKey) {
    const parsed = parseBullJobKey(ctx.bullPrefix, h.parentKey);
    let parent: Record<string, unknown> = {};
    try {
      parent = h.parent ? (JSON.parse(h.parent) as Record<string, unknown>) : {};
    } catch {
      // An unreadable parent record: the policy falls back to the options' flags.
    }
    if (parsed) job.parent = { queue: parsed.queue, id: parsed.id, policy: policyOf(parent, opts) };
  }
  if (deps.length + processed.length + failed.length + unsuccessful.length > 0) {
    const key = (k: string) => hopperKeyOf(ctx, k) ?? k;
    const proc = pairs(processed);
    const fail = pairs(failed);
    job.children = {
      pending: deps.map(key),
      processed: Object.entries(proc).map(([k, v]) => [key(k), v]),
      // BullMQ's `failed` records the children let go of (continue / ignore): Hopper's ignored.
      ignored: Object.entries(fail).map(([k, v]) => [key(k), v]),
      failed: unsuccessful.map((k) => [key(k), 'failed in BullMQ']),
    };
  }
  return { ok: true, job, logsDropped: Math.max(0, logCount - logs.length) };
}

/** How many values a job writes in Hopper (to bound a batch). */
export function weightOf(job: ImportedJob): number {
  const c = job.children;
  return 20 + job.logs.length + (c ? c.pending.length + 2 * (c.processed.length + c.failed.length + c.ignored.length) : 0);
}
