/**
 * The only place BullMQ's keys are named (for reading its layout and moving jobs out of it), and
 * the keys `hopper migrate` keeps beside them while it moves a queue. BullMQ's layout: every key of
 * queue `q` under prefix `bull` starts with `bull:q:`; a job is the hash `bull:q:<id>` with its
 * logs (`:logs`), lock (`:lock`) and, as a parent, `:dependencies`, `:processed`, `:failed`,
 * `:unsuccessful`.
 */

/** BullMQ's keys for one queue, and the migration's own keys beside them. */
export interface BullKeys {
  /** `prefix:queue:`: a job's key is this plus its id. */
  readonly base: string;
  readonly prefix: string;
  readonly queue: string;
  readonly meta: string;
  readonly wait: string;
  /** BullMQ 5 keeps a paused queue's waiting jobs here (6 keeps them in wait). */
  readonly paused: string;
  readonly active: string;
  readonly prioritized: string;
  readonly delayed: string;
  readonly completed: string;
  readonly failed: string;
  readonly waitingChildren: string;
  readonly id: string;
  readonly marker: string;
  readonly events: string;
  readonly stalled: string;
  /** Sorted set of job schedulers (and legacy repeatables) by next fire. */
  readonly repeat: string;
  /** Hash of a job scheduler (or a legacy repeatable's options). */
  scheduler(id: string): string;
  job(id: string): string;
  dedup(id: string): string;
  /** The migration lock: one `hopper migrate` per queue at a time (either direction). */
  readonly migrateLock: string;
  /** Sorted set of the jobs taken out of BullMQ's structures, not yet finished (member id, score: order taken). */
  readonly moving: string;
  /** Hash: id -> JSON of where a taken job was (state, score) and what it becomes. */
  readonly movingInfo: string;
  /** Counter ordering the taken jobs. */
  readonly movingSeq: string;
  /** Set of jobs Hopper refused in the current run (left in BullMQ; deleted when a run ends). */
  readonly refused: string;
  /** Set of parents moved to Hopper whose children were still pending here (their dependency keys are kept). */
  readonly movedParents: string;
  /** Hash: deduplication id -> moved job, for the deduplication keys leased while their job is in Hopper (bullmq-dedup.ts). */
  readonly dedupLeases: string;
  /** Hash: which side's automatic ids are above (`high`), and where that range starts (`fence`): see id-ranges.ts. */
  readonly idRanges: string;
}

/** BullMQ's keys of queue `queue` under `prefix` (default `bull`). */
export function bullKeys(prefix: string, queue: string): BullKeys {
  const base = `${prefix}:${queue}:`;
  const m = `${base}hopper-migrate:`;
  return {
    base,
    prefix,
    queue,
    meta: `${base}meta`,
    wait: `${base}wait`,
    paused: `${base}paused`,
    active: `${base}active`,
    prioritized: `${base}prioritized`,
    delayed: `${base}delayed`,
    completed: `${base}completed`,
    failed: `${base}failed`,
    waitingChildren: `${base}waiting-children`,
    id: `${base}id`,
    marker: `${base}marker`,
    events: `${base}events`,
    stalled: `${base}stalled`,
    repeat: `${base}repeat`,
    scheduler: (id) => `${base}repeat:${id}`,
    job: (id) => `${base}${id}`,
    dedup: (id) => `${base}de:${id}`,
    migrateLock: `${m}lock`,
    moving: `${m}moving`,
    movingInfo: `${m}moving-info`,
    movingSeq: `${m}seq`,
    movedParents: `${m}parents`,
    refused: `${m}refused`,
    idRanges: `${m}ids`,
    dedupLeases: `${m}dedup-leases`,
  };
}

/**
 * The queue and id of a BullMQ job key (`prefix:queue:id`): BullMQ refuses ':' in queue names, so
 * the first ':' after the prefix ends the queue name.
 */
export function parseBullJobKey(prefix: string, key: string): { queue: string; id: string } | undefined {
  if (!key.startsWith(`${prefix}:`)) return undefined;
  const rest = key.slice(prefix.length + 1);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { queue: rest.slice(0, colon), id: rest.slice(colon + 1) };
}

/** The delayed set's score packs the due time (ms) above 12 bits of order. */
export const DELAYED_SCORE_SHIFT = 4096;

/** The prioritized set's score packs the priority above a 32-bit counter. */
export const PRIORITY_SCORE_SHIFT = 0x100000000;
