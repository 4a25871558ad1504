/**
 * The Redis side of the migration writes (backend/import-records.ts): importJobs.lua and
 * settleChildren.lua. Each job goes to the script as one JSON object with short names (the
 * script's header lists them).
 */
import type { ExternalChildOutcome, ImportedDedupKey, ImportedDedupOutcome, ImportedJob, ImportOutcome } from '../import-records.js';
import type { ChildFailurePolicy } from '../requests.js';
import type { RedisClient } from './connection.js';
import { queueKeys, type QueueKeys } from './keys.js';
import { timeArg } from './replies.js';
import { runScript } from './script-runner.js';
import { SCRIPTS } from './scripts.generated.js';

/** The letters the Lua flow helpers store for a child's failure policy (includes/flow.lua). */
const POLICY_LETTER: Record<ChildFailurePolicy, string> = { none: '', fail: 'f', continue: 'c', ignore: 'i', remove: 'r' };

/** The base of queue `queue` under `prefix` (a parent or child in another queue of the same Hopper). */
function siblingBase(prefix: string, queue: string): string {
  return queueKeys(prefix, queue).base;
}

function wireJob(prefix: string, j: ImportedJob): string {
  const wire: Record<string, unknown> = {
    i: j.id,
    n: j.name,
    d: j.data,
    o: j.opts,
    t: j.timestamp,
    s: j.state,
    p: j.priority,
    dl: j.delay,
    am: j.attemptsMade,
    as: j.attemptsStarted,
    sc: j.stalledCounter,
    lg: j.logs,
  };
  if (j.due !== undefined) wire.du = j.due;
  if (j.front) wire.fr_ = 1;
  if (j.processedOn !== undefined) wire.po = j.processedOn;
  if (j.finishedOn !== undefined) wire.fo = j.finishedOn;
  if (j.returnValue !== undefined) wire.rv = j.returnValue;
  if (j.failedReason !== undefined) wire.fr = j.failedReason;
  if (j.stacktrace !== undefined) wire.st = j.stacktrace;
  if (j.progress !== undefined) wire.pg = j.progress;
  if (j.processedBy !== undefined) wire.pb = j.processedBy;
  if (j.dedup) wire.de = { i: j.dedup.id, t: j.dedup.ttlMs };
  if (j.parent) wire.pl = { b: siblingBase(prefix, j.parent.queue), i: j.parent.id, p: POLICY_LETTER[j.parent.policy] };
  if (j.children) {
    wire.ch = { p: j.children.pending, c: j.children.processed, f: j.children.failed, g: j.children.ignored };
  }
  // cjson decodes an empty array as an empty object: the script reads lists with ipairs and `#`, which treat both alike.
  return JSON.stringify(wire);
}

/** importJobs.lua: see ImportOperations.importJobs. */
export async function importJobs(
  client: RedisClient,
  prefix: string,
  k: QueueKeys,
  jobs: ImportedJob[],
  now?: number,
): Promise<ImportOutcome[]> {
  if (jobs.length === 0) return [];
  const reply = (await runScript(
    client,
    SCRIPTS.importJobs,
    {
      meta: k.meta,
      wait: k.wait,
      prio: k.prio,
      prioCounter: k.prioCounter,
      delayed: k.delayed,
      completed: k.completed,
      failed: k.failed,
      waitingChildren: k.waitingChildren,
      events: k.events,
      marker: k.marker,
    },
    { now: timeArg(now), base: k.base },
    jobs.map((j) => wireJob(prefix, j)),
  )) as number[];
  return reply.slice(1).map((flags) => ({
    outcome: flags === 0 ? 'exists' : 'imported',
    dedupHeldElsewhere: (flags & 2) !== 0,
    parentMissing: (flags & 4) !== 0,
  }));
}

/** reserveJobIds.lua: see ImportOperations.reserveJobIds. */
export async function reserveJobIds(client: RedisClient, k: QueueKeys, atLeast: number): Promise<number> {
  return Number(await runScript(client, SCRIPTS.reserveJobIds, { id: k.id }, { atLeast: String(atLeast) }, []));
}

/** importDedupKeys.lua: see ImportOperations.importDedupKeys. */
export async function importDedupKeys(client: RedisClient, k: QueueKeys, keys: ImportedDedupKey[]): Promise<ImportedDedupOutcome> {
  if (keys.length === 0) return { written: 0, lengthened: 0, keptHere: 0 };
  const reply = (await runScript(
    client,
    SCRIPTS.importDedupKeys,
    { meta: k.meta },
    { base: k.base },
    keys.flatMap((key) => [key.id, key.jobId, String(key.ttlMs)]),
  )) as number[];
  return { written: Number(reply[0]), lengthened: Number(reply[1]), keptHere: Number(reply[2]) };
}

/** settleChildren.lua: see ImportOperations.settleChildren. */
export async function settleChildren(
  client: RedisClient,
  prefix: string,
  k: QueueKeys,
  id: string,
  children: ExternalChildOutcome[],
  now?: number,
): Promise<number> {
  if (children.length === 0) return 0;
  const rest: string[] = [];
  for (const c of children) {
    rest.push(
      siblingBase(prefix, c.queue),
      c.id,
      c.outcome === 'completed' ? 'c' : c.outcome === 'failed' ? 'f' : 'r',
      POLICY_LETTER[c.policy],
      c.value,
    );
  }
  const reply = (await runScript(
    client,
    SCRIPTS.settleChildren,
    { meta: k.meta },
    { now: timeArg(now), base: k.base, id },
    rest,
  )) as number[];
  return reply[1];
}
