// Shared pieces of the fault suite's rows: workloads, fault schedules and the criteria every row
// keeps unless it says otherwise.
import { LOCK, sleep } from './run-row.mjs';
import { FaultProxy } from './proxy.mjs';
import { until } from './admin.mjs';
import { readRecords } from './checker.mjs';

/** A fault longer than the lock: a lock, two stall checks and a second (by then the job is rescued). */
export const PAST_LOCK_MS = LOCK.lockDuration + 2 * LOCK.stalledInterval + 1_000;

export const work = (min, spread) => (rand) => () => ({ ms: min + Math.floor(rand() * spread) });

/** The criteria every row keeps unless it says otherwise. */
export function base(m, { dupes = 'explained' } = {}) {
  const out = [];
  if (m.lost) out.push(`lost ${m.lost} (${m.samples.lost.join(', ')})`);
  if (m.stuck) out.push(`stuck ${m.stuck} (${m.samples.stuck.join(', ')})`);
  if (m.unexpected) out.push(`unexpected ${m.unexpected}`);
  if (m.reusedAttempts) out.push(`${m.reusedAttempts} jobs ran twice under one attempt number (${m.samples.reusedAttempts.join(', ')})`);
  if (!m.drained) out.push('the queue did not drain');
  if (dupes === 'none' && m.duplicated) out.push(`duplicated ${m.duplicated} without a fault that explains them`);
  if (dupes === 'explained' && m.unexplainedDuplicates)
    out.push(`unexplained duplicates ${m.unexplainedDuplicates} (${m.samples.unexplained.join(', ')})`);
  return out;
}

/** Kills Redis `afterMs` into the row and restarts it `downMs` later (same data directory). */
export async function killRedis(ctx, afterMs, downMs) {
  await sleep(afterMs);
  const from = Date.now();
  await ctx.redis.kill();
  await sleep(downMs);
  await ctx.redis.start();
  ctx.notes.downMs = Date.now() - from;
  ctx.windows.push({ from: from - 1_000, to: Date.now() + LOCK.lockDuration });
}

/**
 * Starts one more worker process whose connection goes through a fault proxy, lets it take work
 * for `warmMs`, then applies `fault(proxy)` for `ms` and heals. The process is recorded as
 * faulted for the duration (its jobs may be redone by others).
 */
export async function isolateWorker(ctx, { warmMs = 2_000, ms, fault, overrides }) {
  const proxy = await new FaultProxy(ctx.redis.port).start();
  ctx.cleanup.push(() => proxy.close());
  const child = await ctx.pool.spawn({ url: proxy.url, connection: proxy.url, ...overrides?.(proxy) });
  await sleep(warmMs);
  const entry = { kind: 'network', pid: child.pid, at: Date.now() };
  ctx.pool.faults.push(entry);
  fault(proxy);
  await sleep(ms);
  proxy.heal();
  entry.until = Date.now();
  ctx.notes.isolatedPid = child.pid;
  ctx.notes.healedAt = entry.until;
}

/** How long the isolating rows keep producing once the isolated worker took work again. */
const AFTER_RESUME_MS = 1_000;

/** The isolated worker's first effect after the heal, read from the effects file (undefined: none yet). */
function resumedEffect(ctx) {
  const { isolatedPid: pid, healedAt } = ctx.notes;
  return readRecords(ctx.cfg.effects).find((r) => r.pid === pid && r.t === 'effect' && r.at > healedAt);
}

/**
 * The workload of the rows that cut one worker off for longer than the lock and require it to
 * take work again after the heal: 400 jobs at 40/s, then, from the heal, up to 600 at 30/s for
 * it to resume on, which stop 1 s after it did (or run to their end: the row then fails).
 */
export async function produceUntilResumed(ctx) {
  await ctx.producer.run({ count: 400, perSecond: 40, data: work(200, 300)(ctx.rand) });
  await until(() => ctx.notes.healedAt, 60_000, 'the isolated worker was not healed');
  let resumedAt;
  const watch = setInterval(() => {
    if (resumedAt === undefined && resumedEffect(ctx)) resumedAt = Date.now();
  }, 250);
  try {
    await ctx.producer.run({
      count: 600,
      perSecond: 30,
      from: 400,
      data: work(100, 200)(ctx.rand),
      stop: () => resumedAt !== undefined && Date.now() > resumedAt + AFTER_RESUME_MS,
    });
  } finally {
    clearInterval(watch);
  }
}

/** The isolated worker took a job after the heal (its delay noted), and its jobs were rescued. */
export function resumedCriteria(m, ctx) {
  const out = [];
  const { isolatedPid: pid, healedAt } = ctx.notes;
  const resumed = m.records.find((r) => r.pid === pid && r.t === 'effect' && r.at > healedAt);
  if (resumed) ctx.notes.resumedAfterMs = resumed.at - healedAt;
  else out.push('the isolated worker took no job after the heal: it hangs on its dead connections');
  const exit = ctx.pool.exits.find((x) => x.pid === pid);
  ctx.notes.isolatedExit = exit ? { code: exit.code, signal: exit.signal } : 'still running';
  if (m.stalled < 1) out.push('no stall was detected: the isolated worker held no job, nothing was tested');
  return out;
}

/** SIGKILLs a random worker process `times` times, every 0.7 to 1.6 s, from the first second. */
export function killRandomly(times) {
  return async (ctx) => {
    await sleep(1_000);
    for (let i = 0; i < times; i++) {
      ctx.pool.signal(ctx.pool.pick(ctx.rand), 'SIGKILL');
      await sleep(700 + Math.floor(ctx.rand() * 900));
    }
  };
}

/** Produces `count` jobs at `perSecond` with data from `data(rand)(i)`. */
export function produce(count, perSecond, data = work(20, 60)) {
  return (ctx) => ctx.producer.run({ count, perSecond, data: data(ctx.rand) });
}

/** The job scheduler the scheduler rows run: `every` ms, its occurrences are short jobs. */
export const SCHEDULER_ID = 'tick';

/** Scheduler occurrences are jobs the engine creates (ids `sched:<id>:<instant>`), not in the ledger. */
export const isOccurrence = (id) => id.startsWith('sched:');

/** Starts the scheduler; `repeat` adds repeat options (say, a catch-up policy). */
export async function startScheduler(ctx, every, repeat = {}) {
  await ctx.producer.queue.upsertJobScheduler(SCHEDULER_ID, { every, ...repeat }, { name: 'tick', data: { ms: 30 } });
  ctx.notes.scheduler = { every, from: Date.now() };
}

/** Removes the scheduler (and its pending occurrence), so the queue can drain. */
export async function stopScheduler(ctx) {
  const info = await ctx.producer.queue.getJobScheduler(SCHEDULER_ID);
  ctx.notes.scheduler.counted = { skippedByOverlap: info?.skippedByOverlap ?? 0, missed: info?.missed ?? 0 };
  await ctx.producer.queue.removeJobScheduler(SCHEDULER_ID);
  ctx.notes.scheduler.to = Date.now();
}

/**
 * A job scheduler's promise: each occurrence is created once (instants on the `every` grid, none
 * twice), none is lost between the first and the removal (a gap in the grid must be counted by the
 * scheduler, as skipped by overlap or missed, when `counted`; else there may be none; the last one
 * close to the removal), none runs before its instant, and none runs twice unless a fault
 * explains it (the base criteria).
 */
export function schedulerCriteria(m, ctx, { lateMs = 5_000, counted = false } = {}) {
  const out = [];
  const { every, to } = ctx.notes.scheduler;
  const runs = new Map();
  for (const [id, list] of m.starts) if (isOccurrence(id)) runs.set(Number(id.slice(id.lastIndexOf(':') + 1)), list);
  const instants = [...runs.keys()].sort((a, b) => a - b);
  let missing = 0;
  let offGrid = 0;
  let early = 0;
  let late = 0;
  for (let i = 1; i < instants.length; i++) {
    const gap = instants[i] - instants[i - 1];
    if (gap % every !== 0) offGrid++;
    else missing += gap / every - 1;
  }
  for (let i = 0; i < instants.length; i++) {
    const first = Math.min(...runs.get(instants[i]).map((r) => r.at));
    // The first occurrence of a new `every` scheduler is its current slot, due at once.
    if (first < instants[i] - 100) early++;
    if (i > 0 && first > instants[i] + lateMs) late++;
  }
  const tail = to - (instants.at(-1) ?? 0);
  const { skippedByOverlap = 0, missed = 0 } = ctx.notes.scheduler.counted ?? {};
  const allowed = counted ? skippedByOverlap + missed : 0;
  ctx.notes.occurrences = {
    ran: instants.length,
    gaps: missing,
    skippedByOverlap,
    missed,
    offGrid,
    early,
    late,
    twice: instants.filter((t) => runs.get(t).length > 1).length,
  };
  if (instants.length < 3) out.push(`scheduler: only ${instants.length} occurrences ran`);
  if (offGrid) out.push(`scheduler: ${offGrid} occurrences off the ${every} ms grid (an occurrence created twice)`);
  if (missing > allowed)
    out.push(
      `scheduler: ${missing} instants without an occurrence between the first and the last, ${allowed} counted by the scheduler (skipped by overlap, missed)`,
    );
  if (tail > 3 * every + lateMs)
    out.push(`scheduler: the last occurrence ran ${tail} ms before the scheduler was removed (occurrences lost at the end)`);
  if (early) out.push(`scheduler: ${early} occurrences ran before their instant`);
  if (late) out.push(`scheduler: ${late} occurrences ran more than ${lateMs} ms after their instant`);
  return out;
}
