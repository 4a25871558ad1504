/**
 * `migrateToBullMQ`: the way back. Moves a Hopper queue's waiting, prioritized, delayed and
 * failed jobs (completed ones with `withHistory`) and its job schedulers to BullMQ's layout, for a
 * team that must roll back; exactly once and resumable (export-mover.ts), under the same lock as
 * the forward direction. Hopper-only state (groups, steps, dead letters, budgets, runs, timeouts,
 * flows, scheduler policies, queue settings) is listed by the dry run and refused by a run
 * unless `dropHopperOnly`; the report says what was dropped. Active jobs are waited for (moved
 * once back in a list, finished, or their lock expired).
 */
import { Queue } from '../api/queue.js';
import type { ExportSource } from '../backend/import-records.js';
import { closeClient, openClient } from '../backend/redis/connection.js';
import { queueKeys } from '../backend/redis/keys.js';
import { MigrationError } from '../job/errors.js';
import { bullKeys } from './bullmq-keys.js';
import { detectLayout } from './bullmq-layout.js';
import { bullCounts, hopperCounts } from './counts.js';
import { HOPPER_ONLY, type HopperOnlyFeature } from './export-jobs.js';
import { ExportMover } from './export-mover.js';
import { describeFound, scanHopper } from './export-scan.js';
import { moveSchedulerBack, readHopperSchedulers, type ExportingBackend } from './export-schedulers.js';
import { MigrationLock } from './migration-lock.js';
import type { MoveTally } from './mover.js';
import { MIGRATED_STATES, type MigrateOptions, type MigrationReport } from './report.js';
import { checkOptions } from './to-hopper.js';

/** The BullMQ version written to a new queue's meta when none is given: the one Hopper is tested against. */
export const DEFAULT_BULLMQ_VERSION = '6.7.0';

/** Longest single wait for Hopper's events between two passes, ms. */
const MAX_WAIT_MS = 1000;

/**
 * Moves Hopper queue `options.queue` (under `options.hopperPrefix`, default `hopper`, on the
 * Redis `options.from`) back to BullMQ (under `options.prefix`, default `bull`, on `options.to`,
 * default `from`) with no job lost or doubled; resumable after a crash at any point. See
 * docs/migrating.md, "The way back".
 *
 * @example
 * const report = await migrateToBullMQ({ from: 'redis://localhost:6379', queue: 'mail', dropHopperOnly: true });
 * console.log(summaryLine(report)); // migrated 1200 jobs (1000 waiting, 200 delayed), 2 schedulers; lost 0
 */
export async function migrateToBullMQ(options: MigrateOptions): Promise<MigrationReport> {
  const started = Date.now();
  checkOptions(options, 'to-bullmq');
  const prefix = options.prefix ?? 'bull';
  const hopperPrefix = options.hopperPrefix ?? 'hopper';
  const k = bullKeys(prefix, options.queue);
  const bullHandle = openClient(options.to ?? options.from, 'command');
  const bull = bullHandle.client;
  const hopperHandle = openClient(options.from, 'command');
  let queue: Queue | undefined;
  let lock: MigrationLock | undefined;
  try {
    const hk = queueKeys(hopperPrefix, options.queue);
    if ((await hopperHandle.client.exists(hk.meta, hk.wait, hk.delayed, hk.failed, hk.prio, hk.schedulers)) === 0) {
      throw new MigrationError(
        'no-queue',
        `Hopper queue "${options.queue}" under prefix "${hopperPrefix}" does not exist. Check --queue and --hopper-prefix (Hopper's default prefix is "hopper").`,
      );
    }
    // The target's layout: the version its meta records, else the one asked for (default 6).
    let major: 5 | 6;
    let recorded: string | undefined;
    try {
      const layout = await detectLayout(bull, k);
      major = layout.version;
      recorded = layout.recorded;
    } catch (err) {
      if (!(err instanceof MigrationError) || err.reason !== 'no-queue') throw err;
      major = Number((options.bullmqVersion ?? DEFAULT_BULLMQ_VERSION).split('.')[0]) as 5 | 6;
    }
    options.onProgress?.({ kind: 'layout', version: major, recorded, paused: false });
    queue = new Queue(options.queue, { connection: options.from, prefix: hopperPrefix });
    await queue.waitUntilReady();
    const backend = queue.backend as ExportingBackend;
    if (!backend.exportTake) {
      throw new MigrationError(
        'unsupported-target',
        'The Hopper connection given (--from) is not a Redis one: hopper migrate --to-bullmq reads Hopper on Redis only.',
      );
    }
    const now = await backend.time();
    const withHistory = options.withHistory ?? false;
    const drop = options.dropHopperOnly ?? false;
    const base = { direction: 'to-bullmq' as const, layout: { version: major, recorded } };
    const schedulers = await readHopperSchedulers(backend);
    const sourceBefore = await hopperCounts(queue);
    if (options.dryRun) {
      const scan = await scanHopper(backend, schedulers, withHistory);
      return {
        ...base,
        dryRun: true,
        moved: scan.wouldMove,
        schedulers: schedulers.length,
        alreadyThere: 0,
        left: { held: scan.held, waitingForParent: 0, refused: 0, history: withHistory ? 0 : sourceBefore.completed },
        refusals: [],
        refusedCount: 0,
        notes: [],
        hopperOnly: { found: countsOf(scan.found), dropped: {} },
        counts: { sourceBefore, sourceAfter: sourceBefore, destinationAfter: await bullCounts(bull, k) },
        countsMatch: true,
        lost: 0,
        ended: 'done',
        durationMs: Date.now() - started,
      };
    }
    lock = new MigrationLock(bull, k.migrateLock, options.lockTtlMs ?? 10_000, options.queue);
    await lock.take();
    // Refuse before the first write when Hopper-only state would be lost.
    const scan = await scanHopper(backend, schedulers, withHistory);
    if (!drop && Object.keys(scan.found).length > 0) {
      throw new MigrationError(
        'hopper-only-state',
        `Hopper queue "${options.queue}" holds state BullMQ has no place for: ${describeFound(scan.found, HOPPER_ONLY)}. ` +
          'Nothing was moved. Run again with --drop-hopper-only (dropHopperOnly: true) to move the jobs and schedulers without it, or finish or remove that state first.',
      );
    }
    const metaFields = await bull.hmget(k.meta, 'version', 'opts.maxLenEvents');
    if (metaFields[0] === null) await bull.hset(k.meta, 'version', `bullmq:${versionText(options.bullmqVersion, major)}`);
    if (metaFields[1] === null) await bull.hset(k.meta, 'opts.maxLenEvents', 10000);
    if ((await queue.isPaused()) && recorded === undefined) await bull.hset(k.meta, 'paused', 1);
    const tally: MoveTally = {
      moved: { waiting: 0, prioritized: 0, delayed: 0, 'waiting-children': 0, failed: 0, completed: 0 },
      alreadyThere: 0,
      refusals: [],
      refusedCount: 0,
      notes: [],
      taken: 0,
      givenBack: 0,
    };
    const progress = options.onProgress ?? (() => undefined);
    const mover = new ExportMover(backend, { client: bull, k, major }, tally, drop, options.batchSize ?? 200, progress);
    const lockRef = lock;
    const stop = () => options.signal?.aborted === true || lockRef.lost;
    const droppedSchedulers: Partial<Record<HopperOnlyFeature, number>> = {};
    let schedulerCount = 0;
    for (const s of schedulers) {
      if (stop()) break;
      const outcome = await moveSchedulerBack(backend, bull, k, s, now);
      for (const f of s.hopperOnly) droppedSchedulers[f] = (droppedSchedulers[f] ?? 0) + 1;
      if (outcome === 'moved') schedulerCount++;
      progress({ kind: 'scheduler', id: s.id, outcome: outcome === 'exists' ? 'exists' : 'moved' });
    }
    // What an interrupted run left in transit goes first (a copy already in BullMQ wins).
    const pending = await backend.exportPending();
    tally.taken += pending.length;
    await mover.moveTaken(pending);
    let lastId = await backend.lastEventId();
    let ended: MigrationReport['ended'] = 'done';
    let held = 0;
    for (;;) {
      let movedThisPass = 0;
      const sources: ExportSource[] = [{ state: 'stalled' }, { state: 'waiting' }, { state: 'prioritized' }];
      if (drop) {
        for (const g of await backend.getGroups(0, -1)) sources.push({ state: 'waiting', group: g.id });
        sources.push({ state: 'waiting-children' });
      }
      sources.push({ state: 'delayed' }, { state: 'failed' });
      if (withHistory) sources.push({ state: 'completed' });
      for (const source of sources) {
        if (stop()) break;
        movedThisPass += (await mover.drain(source, stop)).moved;
      }
      held = (await backend.getStateCounts()).active;
      if (stop()) {
        ended = 'stopped';
        break;
      }
      progress({ kind: 'waiting', held, waitingForParent: 0 });
      if (movedThisPass === 0 && held === 0) break;
      if (movedThisPass > 0) continue;
      // Wait for Hopper to signal something (a job added, finished, stalled), at most MAX_WAIT_MS.
      const read = await backend.readEvents(lastId, MAX_WAIT_MS, 1000, false);
      if (read.events.length > 0) lastId = read.events[read.events.length - 1].id;
    }
    if (lock.lost) {
      throw new MigrationError(
        'lock-lost',
        `The migration lock of queue "${options.queue}" was lost (this process was paused longer than its ${options.lockTtlMs ?? 10_000} ms ttl?): stopped. Every job is on one side or the other; run again to resume.`,
      );
    }
    const sourceAfter = await hopperCounts(queue);
    const inTransit = (await backend.exportPending()).length;
    const movable = MIGRATED_STATES.filter((s) => withHistory || s !== 'completed').reduce((sum, s) => sum + sourceAfter[s], 0);
    const countsMatch = ended !== 'stopped' && inTransit === 0 && movable === 0 && sourceAfter.active === held;
    const moved = MIGRATED_STATES.reduce((sum, s) => sum + tally.moved[s], 0);
    const dropped: Partial<Record<HopperOnlyFeature, number>> = { ...mover.dropped };
    for (const [f, n] of Object.entries(droppedSchedulers)) dropped[f as HopperOnlyFeature] = (dropped[f as HopperOnlyFeature] ?? 0) + n;
    if (drop && scan.found['queue-settings']) dropped['queue-settings'] = 1;
    if (mover.vanished > 0) tally.notes.push(`${mover.vanished} taken job(s) were gone when read (removed meanwhile); nothing to move`);
    return {
      ...base,
      dryRun: false,
      moved: tally.moved,
      schedulers: schedulerCount,
      alreadyThere: tally.alreadyThere,
      left: { held, waitingForParent: 0, refused: 0, history: withHistory ? 0 : sourceAfter.completed },
      refusals: tally.refusals,
      refusedCount: tally.refusedCount,
      notes: tally.notes,
      hopperOnly: { found: countsOf(scan.found), dropped },
      counts: { sourceBefore, sourceAfter, destinationAfter: await bullCounts(bull, k) },
      countsMatch,
      lost: Math.max(0, tally.taken - moved - tally.alreadyThere - tally.givenBack - mover.vanished - inTransit),
      ended,
      durationMs: Date.now() - started,
    };
  } finally {
    await lock?.release();
    await queue?.close();
    await closeClient(hopperHandle);
    await closeClient(bullHandle);
  }
}

function countsOf(found: Record<string, { count: number } | undefined>): Partial<Record<HopperOnlyFeature, number>> {
  const out: Partial<Record<HopperOnlyFeature, number>> = {};
  for (const [f, e] of Object.entries(found)) if (e) out[f as HopperOnlyFeature] = e.count;
  return out;
}

/** The version text written to a new BullMQ queue's meta (`bullmq:<x.y.z>`). */
function versionText(given: string | undefined, major: 5 | 6): string {
  if (given && /^\d+\.\d+\.\d+$/.test(given)) return given;
  return major === 6 ? DEFAULT_BULLMQ_VERSION : '5.0.0';
}
