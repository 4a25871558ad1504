/**
 * Turning arguments into script values and script replies into records: the Redis backend's
 * codecs, shared by its reads and writes.
 */
import type {
  AdvanceSchedulerResult,
  CancelJobResult,
  ChildDependencyResult,
  ClaimRequest,
  ClaimResult,
  ClaimedJob,
  JobRecord,
  LogWriteResult,
  MovedJobs,
  RefusedMoveCode,
  RemoveJobResult,
  ReplayDeadLetterResult,
  Retention,
  SchedulerPauseResult,
  SchedulerUpsertResult,
  SealParentResult,
  WaitChildrenResult,
  WriteCode,
} from '../backend.js';
import { isJobState } from '../../job/states.js';
import { queueNameOfBase } from './keys.js';

/** A script's flat reply. */
export type Reply = (string | number | null)[];

export function timeArg(now: number | undefined): string | number {
  return now === undefined ? '' : now;
}

export function retentionSpec(keep: Retention): string {
  if (keep.kind === 'keep') return 'k';
  if (keep.kind === 'remove') return 'r';
  return `c${keep.count}a${keep.ageMs}`;
}

/**
 * A reply as runScriptRaw returns it: bulk strings as Buffers, integers as numbers, nil as null,
 * arrays nested.
 */
export type RawReply = readonly unknown[];

/** A raw reply's bulk string (a Buffer: its UTF-8 text) as a string; a string passes as it is; nil as null. */
function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : (value as Buffer).toString();
}

/** A raw reply's integer or numeric bulk string as a number; nil as `absent`. */
export function num(value: unknown, absent: number): number {
  if (typeof value === 'number') return value;
  return value === null || value === undefined ? absent : Number(text(value));
}

/** Parses the claim part of a reply (raw or not) starting at `at`. */
export function parseClaim(reply: RawReply, at: number, now: number, request: ClaimRequest): ClaimResult {
  const paused = num(reply[at], 0) === 1;
  const nextDue = num(reply[at + 1], -1);
  const limitedFor = num(reply[at + 2], 0);
  const schedulersDue = num(reply[at + 3], 0) === 1;
  const n = num(reply[at + 4], 0);
  const jobs = new Array<ClaimedJob>(n);
  const { tokenPrefix, exact } = request;
  // A row's name and opts are nil when equal to the previous row's (includes/claim.lua): the
  // previous string is reused, so jobs claimed together share one name and one opts string.
  let name = '';
  let opts = '';
  for (let i = 0; i < n; i++) {
    const row = reply[at + 5 + i] as readonly unknown[];
    name = text(row[0]) ?? name;
    opts = text(row[2]) ?? opts;
    jobs[i] = {
      id: text(row[9]) as string,
      name,
      data: text(row[1]) as string,
      opts,
      timestamp: num(row[3], 0),
      attemptsMade: num(row[4], 0),
      attemptsStarted: num(row[5], 0),
      priority: num(row[6], 0),
      delay: num(row[7], 0),
      progress: text(row[8]) ?? '',
      stalledCounter: num(row[10], 0),
      failedReason: text(row[11]) ?? undefined,
      // Always present (one object shape for every job, no spread per job).
      overweight: text(row[12]) || undefined,
      token: exact ? tokenPrefix : tokenPrefix + (i + 1),
    };
  }
  return { now, paused, nextDue: nextDue >= 0 ? nextDue : null, limitedFor, schedulersDue, jobs };
}

function toNumber(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Number(value);
}

/** Data stored in 64-byte fields d1..dN of the job hash (see includes/base.lua), if any. */
function chunkedData(hash: Record<string, string>): string | undefined {
  if (hash.dc === undefined) return undefined;
  let data = '';
  for (let i = 1; i <= Number(hash.dc); i++) data += hash[`d${i}`] ?? '';
  return data;
}

/** Builds a JobRecord from a job hash (and its separate data string); undefined if the job is gone. */
export function toRecord(id: string, hash: Record<string, string> | null, bigData: string | null): JobRecord | undefined {
  if (!hash || hash.n === undefined) return undefined;
  return {
    id,
    name: hash.n,
    data: hash.d ?? chunkedData(hash) ?? bigData ?? 'null',
    opts: hash.o,
    state: hash.s !== undefined && isJobState(hash.s) ? hash.s : undefined,
    timestamp: Number(hash.t ?? 0),
    attemptsMade: Number(hash.am ?? 0),
    attemptsStarted: Number(hash.as ?? 0),
    stalledCounter: Number(hash.sc ?? 0),
    priority: Number(hash.p ?? 0),
    delay: Number(hash.dl ?? 0),
    progress: hash.pg,
    processedOn: toNumber(hash.po),
    finishedOn: toNumber(hash.fo),
    processedBy: hash.pb,
    returnvalue: hash.rv,
    failedReason: hash.fr,
    stacktrace: hash.st,
    token: hash.tk,
    deduplicationId: hash.de,
    origin: hash.oq === undefined ? undefined : { queue: hash.oq, jobId: hash.oid },
    parent: hash.pl === undefined ? undefined : parseParentLink(hash.pl),
    awaitingSeal: hash.us !== undefined,
  };
}

/** The parent a child's link (`pl`: policy, parent base, parent id, newline-separated) names. */
export function parseParentLink(link: string): { queue: string; id: string; base: string } {
  const first = link.indexOf('\n');
  const second = link.indexOf('\n', first + 1);
  const base = link.slice(first + 1, second);
  return { queue: queueNameOfBase(base), id: link.slice(second + 1), base };
}

/** Compares two stream ids ('ms-seq'). */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am !== bm ? am - bm : (as ?? 0) - (bs ?? 0);
}

/** A script code the reply of `script` cannot hold: a script and its caller disagree. */
function unknownCode(script: string, code: unknown): Error {
  return new Error(`${script} replied with unknown code ${String(code)}.`);
}

/**
 * The scripts' codes of fenced writes (includes/fence.lua and the scripts that return them), as the
 * seam's WriteCode. One table for every such script: complete and fail map each job's code
 * through it (a property read, no allocation).
 */
const WRITE_CODES: Readonly<Record<number, WriteCode>> = {
  1: 'done',
  2: 'failed-for-good',
  3: 'cancelled',
  [-1]: 'missing',
  [-2]: 'stale-attempt',
  [-3]: 'not-active',
  [-5]: 'refused-cancelled',
  [-7]: 'over-budget',
  [-8]: 'id-taken',
};

/** A fenced write's script code as a WriteCode (`script` names the script in the error for an unknown code). */
export function toWriteCode(code: unknown, script: string): WriteCode {
  const known = WRITE_CODES[Number(code)] as WriteCode | undefined;
  if (known === undefined) throw unknownCode(script, code);
  return known;
}

/** addLog.lua's reply: the number of log lines (>= 0) or a fence refusal (< 0). */
export function toLogWriteResult(reply: unknown): LogWriteResult {
  const n = Number(reply);
  return n >= 0 ? { code: 'done', count: n } : { code: toWriteCode(n, 'addLog'), count: 0 };
}

/** retryJobs.lua's and promoteJobs.lua's reply: a count (a batch by age) or 1/0 per given id. */
export function toMovedJobs(reply: unknown): MovedJobs {
  if (!Array.isArray(reply)) return { count: Number(reply), moved: [] };
  const moved = reply.map((flag) => Number(flag) === 1);
  return { count: moved.filter(Boolean).length, moved };
}

const UPSERT_KINDS = new Map<number, SchedulerUpsertResult>([
  [0, 'unchanged'],
  [1, 'created'],
  [2, 'replaced'],
]);

/** upsertScheduler.lua's code. */
export function toSchedulerUpsertResult(code: unknown): SchedulerUpsertResult {
  const kind = UPSERT_KINDS.get(Number(code));
  if (kind === undefined) throw unknownCode('upsertScheduler', code);
  return kind;
}

const PAUSE_KINDS = new Map<number, SchedulerPauseResult>([
  [1, 'changed'],
  [0, 'unchanged'],
  [-1, 'missing'],
]);

/** pauseScheduler.lua's code. */
export function toSchedulerPauseResult(code: unknown): SchedulerPauseResult {
  const kind = PAUSE_KINDS.get(Number(code));
  if (kind === undefined) throw unknownCode('pauseScheduler', code);
  return kind;
}

/** advanceScheduler.lua's reply: `{ created, again }` or a bare count; created -1 missing, -2 raced. */
export function toAdvanceSchedulerResult(reply: unknown): AdvanceSchedulerResult {
  const [created, again] = Array.isArray(reply) ? [Number(reply[0]), Number(reply[1]) === 1] : [Number(reply), false];
  if (created === -1) return { kind: 'missing' };
  if (created === -2) return { kind: 'raced' };
  if (!(created >= 0)) throw unknownCode('advanceScheduler', created);
  return { kind: 'advanced', created, again };
}

/** removeJob.lua's `{ code, detail }`. */
export function toRemoveJobResult(reply: [number, string | number]): RemoveJobResult {
  const code = Number(reply[0]);
  const detail = String(reply[1]);
  switch (code) {
    case 1:
      return { kind: 'removed', count: Number(detail) };
    case 0:
      return { kind: 'missing' };
    case -4:
      return { kind: 'active' };
    case -5:
      return { kind: 'pendingRun' };
    case -6:
      return { kind: 'descendantActive', key: detail };
    case -7:
      return { kind: 'treeTooLarge', limit: Number(detail) };
    case -8:
      return { kind: 'descendantPendingRun', key: detail };
  }
  throw unknownCode('removeJob', code);
}

const CANCEL_KINDS = new Map<number, CancelJobResult['kind']>([
  [1, 'cancelled'],
  [2, 'signalled'],
  [0, 'missing'],
  [-3, 'finished'],
  [-5, 'pendingRun'],
]);

/** cancelJob.lua's code. */
export function toCancelJobResult(code: unknown): CancelJobResult {
  const kind = CANCEL_KINDS.get(Number(code));
  if (kind === undefined) throw unknownCode('cancelJob', code);
  return { kind };
}

const REPLAY_KINDS = new Map<number, ReplayDeadLetterResult['kind']>([
  [1, 'replayed'],
  [0, 'missing'],
  [-4, 'originExists'],
  [-5, 'busy'],
  [-6, 'notDeadLetter'],
]);

/** One of replayDeadLetters.lua's codes. */
export function toReplayResult(code: unknown): ReplayDeadLetterResult {
  const kind = REPLAY_KINDS.get(Number(code));
  if (kind === undefined) throw unknownCode('replayDeadLetters', code);
  return { kind };
}

const SEAL_KINDS = new Map<number, SealParentResult['kind']>([
  [1, 'sealed'],
  [2, 'released'],
  [0, 'alreadySealed'],
  [-1, 'missing'],
]);

/** sealParent.lua's code. */
export function toSealParentResult(code: unknown): SealParentResult {
  const kind = SEAL_KINDS.get(Number(code));
  if (kind === undefined) throw unknownCode('sealParent', code);
  return { kind };
}

const REFUSED_MOVE_CODES: readonly WriteCode[] = [
  'missing',
  'stale-attempt',
  'not-active',
  'refused-cancelled',
] satisfies RefusedMoveCode[];

/** moveToWaitingChildren.lua's `{ code, reason }`. */
export function toWaitChildrenResult(reply: [number, string]): WaitChildrenResult {
  const code = Number(reply[0]);
  if (code === 1) return { kind: 'moved' };
  if (code === 0) return { kind: 'nothingPending' };
  if (code === -4) return { kind: 'childFailed', reason: String(reply[1]) };
  const refusal = WRITE_CODES[code] as WriteCode | undefined;
  if (refusal !== undefined && REFUSED_MOVE_CODES.includes(refusal)) return { kind: 'refused', code: refusal as RefusedMoveCode };
  throw unknownCode('moveToWaitingChildren', code);
}

const DEPENDENCY_KINDS = new Map<number, ChildDependencyResult['kind']>([
  [1, 'removed'],
  [0, 'notPending'],
  [-1, 'missing'],
  [-3, 'parentMissing'],
]);

/** removeChildDependency.lua's code. */
export function toChildDependencyResult(code: unknown): ChildDependencyResult {
  const kind = DEPENDENCY_KINDS.get(Number(code));
  if (kind === undefined) throw unknownCode('removeChildDependency', code);
  return { kind };
}
