// Runs one row: a private Redis, the processor processes, the producer and the row's fault
// schedule at once; then heal, quiescence, drain, and the checker.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { RedisProc } from './redis.mjs';
import { WorkerPool } from './pool.mjs';
import { Producer } from './producer.mjs';
import { check, readRecords } from './checker.mjs';

/** The short lock settings every row uses, so a row runs in seconds. */
export const LOCK = { lockDuration: 3_000, stalledInterval: 1_500 };

/** After healing, a stalled job is back in line within one lock plus one stall interval (plus slack). */
export const QUIESCENCE_MS = LOCK.lockDuration + 2 * LOCK.stalledInterval + 1_000;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A seeded generator (mulberry32), so a row's random faults replay with its seed. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PENDING = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'];

/** Waits until nothing is pending, or `deadline`; retries through a Redis that is still down. */
async function drain(queue, deadline) {
  let quiet = 0;
  while (Date.now() < deadline) {
    try {
      const counts = await queue.getJobCounts(...PENDING);
      const pending = PENDING.reduce((n, s) => n + (counts[s] ?? 0), 0);
      quiet = pending === 0 ? quiet + 1 : 0;
      if (quiet >= 3) return true;
    } catch {
      quiet = 0;
    }
    await sleep(250);
  }
  return false;
}

async function readStates(queue, ids) {
  const states = new Map();
  for (let i = 0; i < ids.length; i += 200) {
    const slice = ids.slice(i, i + 200);
    const got = await Promise.all(slice.map((id) => queue.getJobState(id)));
    slice.forEach((id, j) => states.set(id, got[j]));
  }
  return states;
}

/**
 * @param {object} row { id, redis?, topology?(), needs?(), env?(dir), scale?, workers?, concurrency?, maxStalledCount?,
 *   sandbox?, removeOnComplete?, onEffect?, unledgered?(id), produce(ctx), inject(ctx), heal?(ctx), drainMs?,
 *   inspect?(ctx, states), verdict(metrics, ctx, states) -> string[] (failures) }
 *   `needs()` names a missing tool, or gives `{ reason }` the machine cannot run the row (the row is
 *   then skipped, never passed); `topology()` gives the
 *   Redis deployment (default: one RedisProc with `row.redis`); `env(dir)` more environment for
 *   the processor processes.
 */
export async function runRow(row, { seed = 1, scale = 1, log = () => {} } = {}) {
  const T0 = Date.now();
  const phase = (name) => process.env.FAULTS_TIMING && console.log(`  [${row.id}] ${name} +${Date.now() - T0} ms`);
  const missing = await row.needs?.();
  if (missing) {
    const skipped = typeof missing === 'object' ? `skipped: ${missing.reason}` : `skipped: ${missing} missing`;
    return { id: row.id, title: row.title, pass: false, skipped, failures: [] };
  }
  const dir = join(tmpdir(), 'hopper-faults', `${row.id}-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const effects = join(dir, 'effects.ndjson');
  const redis = row.topology ? row.topology() : new RedisProc(row.redis);
  try {
    await redis.start();
  } catch (err) {
    await redis.stop().catch(() => {});
    throw err;
  }
  const cfg = {
    url: redis.url,
    connection: redis.connection,
    prefix: 'faults',
    queue: row.id,
    effects,
    concurrency: row.concurrency ?? 4,
    ...LOCK,
    maxStalledCount: row.maxStalledCount ?? 1,
    closeTimeout: row.closeTimeout ?? 10_000,
    removeOnComplete: row.removeOnComplete ?? false,
    sandboxFile: row.sandbox ? new URL('../sandbox-processor.mjs', import.meta.url).pathname : undefined,
    ...row.workerConfig,
  };
  const pool = new WorkerPool(cfg, {
    count: row.workers ?? 3,
    onEffect: row.onEffect,
    onOccurrence: row.onOccurrence,
    env: row.env?.(dir),
  });
  const producer = new Producer({ connection: redis.connection, prefix: cfg.prefix, queue: row.id });
  // `scale` (the quick tier: 0.5) cuts each row's job counts; a row whose criterion needs its
  // counts (the memory rows must fill Redis) says `scale: false`.
  producer.scale = row.scale === false ? 1 : scale;
  const ctx = { row, redis, pool, producer, rand: seeded(seed), windows: [], notes: {}, log, cfg, dir, startAt: 0, cleanup: [] };
  try {
    phase('redis started');
    await pool.start();
    phase('pool started');
    ctx.startAt = Date.now();
    await Promise.all([row.produce(ctx), row.inject(ctx)]);
    await row.heal?.(ctx);
    const healAt = Date.now();
    phase('healed');
    const drained = await drain(producer.queue, healAt + QUIESCENCE_MS + (row.drainMs ?? 20_000));
    const endAt = Date.now();
    const states = await readStates(
      producer.queue,
      producer.ledger.map((e) => e.id),
    );
    const inspected = (await row.inspect?.(ctx, states)) ?? [];
    phase('drained, states read');
    await pool.stop();
    phase('pool stopped');
    const faults = [
      ...pool.faults,
      ...pool.exits
        .filter((x) => x.signal === 'SIGKILL' && !pool.faults.some((f) => f.pid === x.pid))
        .map((x) => ({ kind: 'died', pid: x.pid, at: x.at })),
    ];
    const metrics = check({
      ledger: producer.ledger,
      records: readRecords(effects),
      states,
      faults,
      windows: ctx.windows,
      healAt,
      startAt: ctx.startAt,
      endAt,
      removeOnComplete: cfg.removeOnComplete,
      unledgered: row.unledgered,
    });
    metrics.drained = drained;
    metrics.addErrors = Object.fromEntries(producer.errors);
    metrics.queueErrors = producer.queueErrors;
    metrics.seconds = Math.round((endAt - ctx.startAt) / 100) / 10;
    const failures = [...row.verdict(metrics, ctx, states), ...inspected];
    return { id: row.id, title: row.title, pass: failures.length === 0, failures, metrics, notes: ctx.notes, dir };
  } finally {
    await pool.stop(2_000).catch(() => {});
    for (const fn of ctx.cleanup) await fn().catch(() => {});
    await producer.close();
    await redis.stop();
    phase('closed');
  }
}
