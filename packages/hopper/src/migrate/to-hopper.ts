/**
 * `migrateFromBullMQ`: moves a live BullMQ queue into Hopper, exactly once and resumable (see
 * mover.ts and docs/migrating.md). One run: checks the layout, takes the queue's migration lock,
 * finishes what an interrupted run left in transit, moves the schedulers, then the jobs state by
 * state (parents first), carries children's outcomes over to moved parents, and, while active jobs
 * are held by BullMQ workers (or in bridge mode), waits on BullMQ's events stream and goes again.
 */
import { Queue } from '../api/queue.js';
import { closeClient, duplicateClient, openClient, type RedisClient } from '../backend/redis/connection.js';
import { InvalidOptionsError, MigrationError } from '../job/errors.js';
import { DedupKeeper } from './bullmq-dedup.js';
import { bullKeys, type BullKeys } from './bullmq-keys.js';
import { detectLayout } from './bullmq-layout.js';
import { MigrationLock } from './migration-lock.js';
import { moveScheduler, readSchedulers } from './bullmq-schedulers.js';
import { bullCounts, hopperCounts } from './counts.js';
import { dryRun } from './dry-run.js';
import { IdRanges } from './id-ranges.js';
import { Mover, type ImportingBackend, type MoveTally, type Source } from './mover.js';
import { MIGRATED_STATES, type MigrateOptions, type MigrationReport } from './report.js';

/** Longest single wait for BullMQ's events between two passes, ms. */
const MAX_WAIT_MS = 5000;

/** The BullMQ structures a pass takes from, in order: parents first, then run order. */
function sourcesOf(k: BullKeys, withHistory: boolean): Source[] {
  const sources: Source[] = [
    { key: k.waitingChildren, kind: 'zset', state: 'waiting-children' },
    { key: k.active, kind: 'active', state: 'stalled' },
    { key: k.paused, kind: 'list', state: 'waiting' },
    { key: k.wait, kind: 'list', state: 'waiting' },
    { key: k.prioritized, kind: 'zset', state: 'prioritized' },
    { key: k.delayed, kind: 'zset', state: 'delayed' },
    { key: k.failed, kind: 'zset', state: 'failed' },
  ];
  if (withHistory) sources.push({ key: k.completed, kind: 'zset', state: 'completed' });
  return sources;
}

/**
 * Moves BullMQ queue `options.queue` (under `options.prefix`, default `bull`) into Hopper with no
 * job lost or doubled; resumable after a crash at any point. See docs/migrating.md.
 *
 * @example
 * const report = await migrateFromBullMQ({ from: 'redis://localhost:6379', queue: 'mail' });
 * console.log(summaryLine(report)); // migrated 1200 jobs (1000 waiting, 200 delayed), 2 schedulers; lost 0
 */
export async function migrateFromBullMQ(options: MigrateOptions): Promise<MigrationReport> {
  const started = Date.now();
  checkOptions(options);
  const prefix = options.prefix ?? 'bull';
  const hopperPrefix = options.hopperPrefix ?? 'hopper';
  const k = bullKeys(prefix, options.queue);
  const srcHandle = openClient(options.from, 'command');
  const src = srcHandle.client;
  const queue = new Queue(options.queue, { connection: options.to ?? options.from, prefix: hopperPrefix });
  let waiter: RedisClient | undefined;
  let lock: MigrationLock | undefined;
  try {
    const layout = await detectLayout(src, k);
    options.onProgress?.({ kind: 'layout', version: layout.version, recorded: layout.recorded, paused: layout.paused });
    await queue.waitUntilReady();
    const backend = queue.backend;
    if (!backend.importJobs || !backend.settleChildren || !backend.reserveJobIds || !backend.importDedupKeys) {
      throw new MigrationError(
        'unsupported-target',
        'The Hopper connection given (--to) is not a Redis one: hopper migrate writes to Hopper on Redis only (the SQLite backend is not a migration target).',
      );
    }
    const now = await backend.time();
    const ctx = { bullPrefix: prefix, queue: options.queue, hopperPrefix, now };
    const sourceBefore = await bullCounts(src, k);
    const withHistory = options.withHistory ?? false;
    const sources = sourcesOf(k, withHistory);
    const tally: MoveTally = {
      moved: { waiting: 0, prioritized: 0, delayed: 0, 'waiting-children': 0, failed: 0, completed: 0 },
      alreadyThere: 0,
      refusals: [],
      refusedCount: 0,
      notes: [],
      taken: 0,
      givenBack: 0,
    };
    const base = { direction: 'to-hopper' as const, layout: { version: layout.version, recorded: layout.recorded } };
    if (options.dryRun) {
      const scheds = await readSchedulers(src, k, now);
      const d = await dryRun(src, k, ctx, sources, scheds);
      d.left.history = withHistory ? 0 : sourceBefore.completed;
      return {
        ...base,
        dryRun: true,
        moved: d.moved,
        schedulers: scheds.planned.length,
        alreadyThere: 0,
        left: d.left,
        refusals: d.refusals,
        refusedCount: d.refusedCount,
        notes: [],
        counts: { sourceBefore, sourceAfter: sourceBefore, destinationAfter: await hopperCounts(queue) },
        countsMatch: true,
        lost: 0,
        ended: 'done',
        durationMs: Date.now() - started,
      };
    }
    lock = new MigrationLock(src, k.migrateLock, options.lockTtlMs ?? 10_000, options.queue);
    await lock.take();
    await src.del(k.refused);
    if (layout.paused && !(await queue.isPaused())) await queue.pause();
    const progress = options.onProgress ?? (() => undefined);
    const mover = new Mover(src, k, backend as ImportingBackend, ctx, tally, options.batchSize ?? 200, progress);
    // Automatic ids given on both sides from now on never meet (producers may add on both).
    const idRanges = new IdRanges(src, k, backend as ImportingBackend);
    // Deduplication ids with a ttl whose job did not move with them, and leases of moved jobs' ids.
    const dedup = new DedupKeeper(src, k, backend as ImportingBackend);
    const lockRef = lock;
    const stop = () => options.signal?.aborted === true || lockRef.lost;
    let schedulers = 0;
    let lastId = ((await src.xrevrange(k.events, '+', '-', 'COUNT', 1)) as [string, string[]][])[0]?.[0] ?? '0-0';
    let lastActivity = Date.now();
    let ended: MigrationReport['ended'] = 'done';
    let held: string[] = [];
    // Jobs BullMQ's events showed a worker took since the last pass (their ttl deduplication key
    // stays behind them: bullmq-dedup.ts).
    const takenByWorkers: string[] = [];
    let waitingForParent: string[] = [];
    // What an interrupted run left in transit goes first (a copy already in Hopper wins).
    const pending = await mover.pendingIds();
    tally.taken += pending.length;
    await mover.moveTaken(pending);
    for (;;) {
      let movedThisPass = 0;
      await idRanges.keep();
      await dedup.carry();
      await dedup.carryJobs(takenByWorkers.splice(0));
      const scheds = await readSchedulers(src, k, now);
      for (const r of scheds.refused) tallyRefusal(tally, { id: r.id, state: 'scheduler', why: r.why });
      for (const s of scheds.planned) {
        if (stop()) break;
        const outcome = await moveScheduler(src, k, queue, s);
        if (outcome === 'moved') schedulers++;
        movedThisPass++;
        progress({ kind: 'scheduler', id: s.id, outcome });
      }
      held = [];
      waitingForParent = [];
      for (const source of sources) {
        if (stop()) break;
        const r = await mover.drain(source, stop);
        movedThisPass += r.moved;
        if (source.kind === 'active') held = r.skipped;
        else waitingForParent.push(...r.skipped);
      }
      await mover.settleParents();
      await dedup.keepLeases();
      if (movedThisPass > 0) lastActivity = Date.now();
      if (stop()) {
        ended = 'stopped';
        break;
      }
      progress({ kind: 'waiting', held: held.length, waitingForParent: waitingForParent.length });
      if (!options.follow && movedThisPass === 0 && held.length === 0) break;
      if (options.follow && options.quietForMs !== undefined && Date.now() - lastActivity >= options.quietForMs) {
        ended = 'quiet';
        break;
      }
      if (!options.follow && movedThisPass > 0) continue;
      // Wait for BullMQ to signal something: an add, a job finished or stalled (its events
      // stream), or the earliest held lock to expire; never longer than MAX_WAIT_MS.
      let timeout = MAX_WAIT_MS;
      if (options.follow && options.quietForMs !== undefined) timeout = Math.min(timeout, options.quietForMs - (Date.now() - lastActivity));
      timeout = Math.min(timeout, await earliestLockExpiry(src, k, held));
      timeout = Math.min(timeout, await dedup.leaseCheckIn());
      waiter ??= duplicateClient(src, 'blocking');
      const abort = () => waiter?.disconnect();
      options.signal?.addEventListener('abort', abort, { once: true });
      try {
        const read = await waiter.xread('COUNT', 1000, 'BLOCK', Math.max(1, Math.ceil(timeout)), 'STREAMS', k.events, lastId);
        const entries = read?.[0]?.[1] ?? [];
        if (entries.length > 0) lastId = entries[entries.length - 1][0];
        for (const [, fields] of entries) {
          const event = fieldOf(fields, 'event');
          const jobId = fieldOf(fields, 'jobId');
          if (jobId !== undefined && (event === 'active' || event === 'completed' || event === 'failed')) takenByWorkers.push(jobId);
        }
      } catch (err) {
        if (!options.signal?.aborted) throw err;
      } finally {
        options.signal?.removeEventListener('abort', abort);
      }
    }
    if (lock.lost) {
      throw new MigrationError(
        'lock-lost',
        `The migration lock of queue "${options.queue}" was lost (this process was paused longer than its ${options.lockTtlMs ?? 10_000} ms ttl?): stopped. Every job is on one side or the other; run again to resume.`,
      );
    }
    // Keys of jobs that finished in BullMQ during the run; then, the bridge ending, the leases end
    // (BullMQ's keys of moved jobs go, as they would without it).
    if (ended !== 'stopped') await dedup.carry(true);
    await dedup.keepLeases(true);
    const refusedLeft = new Set(await src.smembers(k.refused));
    await src.del(k.refused);
    const sourceAfter = await bullCounts(src, k);
    const inTransit = await src.zcard(k.moving);
    const parentWaits = waitingForParent.filter((id) => !refusedLeft.has(id)).length;
    const left = {
      held: held.length,
      waitingForParent: parentWaits,
      refused: refusedLeft.size,
      history: withHistory ? 0 : sourceAfter.completed,
    };
    const movable = MIGRATED_STATES.filter((s) => withHistory || s !== 'completed').reduce((sum, s) => sum + sourceAfter[s], 0);
    const countsMatch =
      ended !== 'stopped' && inTransit === 0 && movable === parentWaits + refusedLeft.size && sourceAfter.active === held.length;
    const moved = MIGRATED_STATES.reduce((sum, s) => sum + tally.moved[s], 0);
    return {
      ...base,
      dryRun: false,
      moved: tally.moved,
      schedulers,
      alreadyThere: tally.alreadyThere,
      deduplication: dedup.tally,
      left,
      refusals: tally.refusals,
      refusedCount: tally.refusedCount,
      notes: tally.notes,
      counts: { sourceBefore, sourceAfter, destinationAfter: await hopperCounts(queue) },
      countsMatch,
      lost: Math.max(0, tally.taken - moved - tally.alreadyThere - tally.givenBack - inTransit),
      ended,
      durationMs: Date.now() - started,
    };
  } finally {
    await lock?.release();
    waiter?.disconnect();
    await queue.close();
    await closeClient(srcHandle);
  }
}

function tallyRefusal(tally: MoveTally, r: { id: string; state: string; why: string }): void {
  if (tally.refusals.some((x) => x.id === r.id && x.state === r.state)) return;
  tally.refusedCount++;
  if (tally.refusals.length < 100) tally.refusals.push(r);
}

/** The value of `name` in a stream entry's flat field list. */
function fieldOf(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** Ms until the earliest lock of the held jobs expires (BullMQ's stall rescue, or ours, may take them then). */
async function earliestLockExpiry(client: RedisClient, k: BullKeys, held: string[]): Promise<number> {
  if (held.length === 0) return MAX_WAIT_MS;
  const p = client.pipeline();
  for (const id of held.slice(0, 1000)) p.pttl(`${k.job(id)}:lock`);
  const ttls = ((await p.exec()) ?? []).map((r) => Number(r[1])).filter((t) => t >= 0);
  return ttls.length === 0 ? 1 : Math.min(...ttls) + 5;
}

/** The options every direction checks before connecting. */
export function checkOptions(options: MigrateOptions, direction: 'to-hopper' | 'to-bullmq' = 'to-hopper'): void {
  const fail = (message: string): never => {
    throw new InvalidOptionsError(message);
  };
  if (options === null || typeof options !== 'object') fail('migrate options must be an object.');
  if (typeof options.queue !== 'string' || options.queue === '' || options.queue.includes(':')) {
    fail(`--queue must be a queue name without ':' (BullMQ refuses ':' in queue names), got ${JSON.stringify(options.queue)}.`);
  }
  if (options.from === undefined) fail(`--from (the ${direction === 'to-hopper' ? 'BullMQ' : 'Hopper'} Redis) is required.`);
  if (direction === 'to-hopper' && (options.dropHopperOnly !== undefined || options.bullmqVersion !== undefined)) {
    fail('dropHopperOnly and bullmqVersion (--drop-hopper-only, --bullmq-version) go with the way back (--to-bullmq).');
  }
  if (direction === 'to-bullmq' && options.follow) {
    fail(
      '--follow (the bridge) goes with the way to Hopper; on the way back stop the Hopper producers first, then run it (again for what they added).',
    );
  }
  if (
    options.bullmqVersion !== undefined &&
    !(typeof options.bullmqVersion === 'string' && /^[56](\.\d+\.\d+)?$/.test(options.bullmqVersion))
  ) {
    fail(`--bullmq-version must be 5 or 6, or a 5.x.y / 6.x.y version, got ${JSON.stringify(options.bullmqVersion)}.`);
  }
  for (const [name, value] of [
    ['--prefix', options.prefix],
    ['--hopper-prefix', options.hopperPrefix],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      fail(`${name} must be a non-empty string, got ${JSON.stringify(value)}.`);
  }
  if (options.quietForMs !== undefined && !(Number.isInteger(options.quietForMs) && options.quietForMs > 0)) {
    fail(`--quiet-for must be a positive number of seconds, got ${String(options.quietForMs / 1000)}.`);
  }
  if (options.quietForMs !== undefined && !options.follow)
    fail('--quiet-for goes with --follow (the bridge stops after that long with nothing added).');
  if (options.lockTtlMs !== undefined && !(Number.isInteger(options.lockTtlMs) && options.lockTtlMs >= 300)) {
    fail(`lockTtlMs must be an integer of at least 300 ms, got ${String(options.lockTtlMs)}.`);
  }
  if (options.batchSize !== undefined && !(Number.isInteger(options.batchSize) && options.batchSize >= 1 && options.batchSize <= 1000)) {
    fail(`batchSize must be an integer from 1 to 1000, got ${String(options.batchSize)}.`);
  }
}
