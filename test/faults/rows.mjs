// The rows of the fault suite: each a workload, a fault schedule and its pass criterion (issue 14).
// `verdict` returns the criteria a run missed (empty: pass).
import { LOCK, sleep } from './lib/run-row.mjs';

const work = (min, spread) => (rand) => () => ({ ms: min + Math.floor(rand() * spread) });

/** The criteria every row keeps unless it says otherwise. */
function base(m, { dupes = 'explained' } = {}) {
  const out = [];
  if (m.lost) out.push(`lost ${m.lost} (${m.samples.lost.join(', ')})`);
  if (m.stuck) out.push(`stuck ${m.stuck} (${m.samples.stuck.join(', ')})`);
  if (m.unexpected) out.push(`unexpected ${m.unexpected}`);
  if (!m.drained) out.push('the queue did not drain');
  if (dupes === 'none' && m.duplicated) out.push(`duplicated ${m.duplicated} without a fault that explains them`);
  if (dupes === 'explained' && m.unexplainedDuplicates)
    out.push(`unexplained duplicates ${m.unexplainedDuplicates} (${m.samples.unexplained.join(', ')})`);
  return out;
}

/** Kills Redis `afterMs` into the row and restarts it `downMs` later (same data directory). */
async function killRedis(ctx, afterMs, downMs) {
  await sleep(afterMs);
  const from = Date.now();
  await ctx.redis.kill();
  await sleep(downMs);
  await ctx.redis.start();
  ctx.notes.downMs = Date.now() - from;
  ctx.windows.push({ from: from - 1_000, to: Date.now() + LOCK.lockDuration });
}

/** Produces `count` jobs at `perSecond` with data from `data(rand)(i)`. */
function produce(count, perSecond, data = work(20, 60)) {
  return (ctx) => ctx.producer.run({ count, perSecond, data: data(ctx.rand) });
}

export const ROWS = [
  {
    id: 'baseline',
    title: 'No fault (control)',
    promise: 'Without faults every job runs exactly once.',
    produce: produce(400, 100),
    inject: async () => {},
    verdict: (m) => [...base(m, { dupes: 'none' }), ...(m.failed ? [`failed ${m.failed}`] : [])],
  },
  {
    id: 'worker-sigkill-random',
    title: 'Worker SIGKILL at random moments',
    promise: 'A worker killed at any moment loses no job; its jobs run again after their lock expires.',
    produce: produce(800, 80, work(50, 100)),
    inject: async (ctx) => {
      await sleep(1_000);
      for (let i = 0; i < 6; i++) {
        ctx.pool.signal(ctx.pool.pick(ctx.rand), 'SIGKILL');
        await sleep(700 + Math.floor(ctx.rand() * 900));
      }
    },
    verdict: (m) => base(m),
  },
  {
    id: 'worker-sigkill-after-effect',
    title: 'Worker SIGKILL between side effect and completion',
    promise: 'A job whose effect happened but whose completion was never recorded runs again: at least once, never lost.',
    produce: produce(400, 80, (rand) => (i) => ({ ms: 20 + Math.floor(rand() * 40), gate: i % 20 === 5 })),
    inject: async () => {},
    // The first attempt of 8 gated jobs is killed right after its effect, before its completion.
    onEffect: (pool, child, id, attempt) => {
      pool.killedAfterEffect ??= new Set();
      if (attempt === 1 && pool.killedAfterEffect.size < 8) {
        pool.killedAfterEffect.add(id);
        pool.signal(child, 'SIGKILL', 'SIGKILL-after-effect');
      } else pool.release(child, id);
    },
    verdict: (m, ctx, states) => {
      const out = base(m);
      for (const id of ctx.pool.killedAfterEffect ?? []) {
        const n = m.effects.get(id)?.length ?? 0;
        if (n < 2 && states.get(id) !== 'failed') out.push(`${id}: killed after its effect, ran ${n} time(s), state ${states.get(id)}`);
      }
      return out;
    },
  },
  {
    id: 'worker-sigstop',
    title: 'Worker SIGSTOP longer than its lock, then SIGCONT',
    promise:
      "A frozen worker's jobs are redone once by another worker; the resumed worker's completion is rejected and does not overwrite the result.",
    workers: 3,
    produce: produce(120, 30, work(800, 400)),
    inject: async (ctx) => {
      await sleep(1_500);
      const child = ctx.pool.pick(ctx.rand);
      ctx.notes.frozenPid = child.pid;
      ctx.notes.frozenAt = Date.now();
      await ctx.pool.freeze(child, LOCK.lockDuration + 2 * LOCK.stalledInterval + 1_000);
    },
    inspect: async (ctx, states) => {
      // Who recorded each result (the processor returns its pid), for the verdict.
      ctx.notes.resultPid = new Map();
      for (const [id, state] of states) {
        if (state === 'completed') ctx.notes.resultPid.set(id, (await ctx.producer.queue.getJob(id))?.returnvalue?.pid);
      }
    },
    verdict: (m, ctx) => {
      const out = base(m);
      const { frozenPid: frozen, frozenAt, resultPid } = ctx.notes;
      let redone = 0;
      for (const [id, list] of m.starts) {
        // Held at the freeze: started there before it, its effect there (if any) after it.
        if (!list.some((r) => r.pid === frozen && r.at <= frozenAt)) continue;
        const effects = m.effects.get(id) ?? [];
        if (effects.some((r) => r.pid === frozen && r.at <= frozenAt)) continue;
        const others = effects.filter((r) => r.pid !== frozen).length;
        if (others !== 1) out.push(`${id}: held by the frozen worker, redone ${others} times by others (want 1)`);
        else redone++;
        if (resultPid.get(id) === frozen) out.push(`${id}: the resumed worker's result overwrote the redone one`);
      }
      ctx.notes.redone = redone;
      delete ctx.notes.resultPid;
      if (!redone) out.push('the frozen worker held no job: nothing was tested');
      if (m.lateRejected < 1) out.push('no late completion was rejected');
      return out;
    },
  },
  {
    id: 'worker-sigterm',
    title: 'Graceful SIGTERM (worker.close())',
    promise: 'A worker closed gracefully finishes its in-flight jobs (or releases them at the close deadline): nothing runs twice.',
    produce: produce(150, 30, work(500, 1000)),
    inject: async (ctx) => {
      await sleep(2_000);
      const child = ctx.pool.pick(ctx.rand);
      ctx.notes.termPid = child.pid;
      ctx.pool.signal(child, 'SIGTERM');
    },
    verdict: (m) => [...base(m, { dupes: 'none' }), ...(m.failed ? [`failed ${m.failed}`] : [])],
  },
  {
    id: 'poison',
    title: 'Poison jobs that kill their process',
    promise: 'A job that kills its process fails for good after at most maxStalledCount + 1 crashes; the rest of the queue keeps going.',
    maxStalledCount: 1,
    produce: produce(400, 60, (rand) => (i) => (i % 100 === 50 ? { poison: true } : { ms: 20 + Math.floor(rand() * 60) })),
    inject: async () => {},
    drainMs: 30_000,
    verdict: (m, ctx, states) => {
      const out = base(m);
      for (const [id] of states) {
        const n = Number(id.slice(1));
        if (n % 100 !== 50) continue;
        const crashes = m.starts.get(id)?.length ?? 0;
        if (crashes > 2) out.push(`${id}: ${crashes} crashes (want <= maxStalledCount + 1 = 2)`);
        if (states.get(id) !== 'failed') out.push(`${id}: poison job ended ${states.get(id)}, not failed`);
      }
      return out;
    },
  },
  {
    id: 'event-loop-block',
    title: 'In-process processor blocks the event loop longer than the lock',
    promise: 'A blocked worker loses its locks: the stall is detected and counted, the job runs again, the late completion is rejected.',
    produce: produce(
      300,
      50,
      (rand) => (i) => (i % 100 === 20 ? { blockMs: 9_000, blockOnce: true } : { ms: 20 + Math.floor(rand() * 60) }),
    ),
    inject: async () => {},
    drainMs: 30_000,
    verdict: (m, ctx, states) => {
      const out = base(m);
      if (m.stalled < 1) out.push('no stall was detected');
      for (const [id] of states) {
        if (Number(id.slice(1)) % 100 !== 20) continue;
        if (states.get(id) !== 'completed') out.push(`${id}: blocking job ended ${states.get(id)}`);
      }
      return out;
    },
  },
  {
    id: 'sandbox-block',
    title: 'Sandboxed processor blocks its event loop longer than the lock',
    promise: "A sandboxed processor's blocking does not block the worker: locks are renewed, no stall, no duplicate.",
    sandbox: true,
    produce: produce(100, 25, (rand) => (i) => (i % 40 === 10 ? { blockMs: 9_000 } : { ms: 20 + Math.floor(rand() * 60) })),
    inject: async () => {},
    drainMs: 30_000,
    verdict: (m) => [
      ...base(m, { dupes: 'none' }),
      ...(m.stalled ? [`${m.stalled} stalls`] : []),
      ...(m.failed ? [`failed ${m.failed}`] : []),
    ],
  },
  {
    id: 'redis-kill-aof-always',
    title: 'Redis SIGKILL and restart, AOF appendfsync always',
    promise: 'With appendfsync always, an acknowledged add survives a Redis crash: lost 0.',
    redis: { persistence: 'always' },
    produce: produce(600, 60),
    inject: (ctx) => killRedis(ctx, 3_000, 1_000),
    verdict: (m) => [...base(m), ...(m.recordsLost ? [`records lost ${m.recordsLost}`] : [])],
  },
  {
    id: 'redis-kill-aof-everysec',
    title: 'Redis SIGKILL and restart, AOF appendfsync everysec',
    promise: 'With appendfsync everysec, a Redis crash loses at most about the last second of writes: the loss is bounded and reported.',
    redis: { persistence: 'everysec' },
    produce: produce(600, 60),
    inject: (ctx) => killRedis(ctx, 3_000, 1_000),
    // Loss is allowed here, bounded by about a second of adds; the queue must still drain.
    verdict: (m) => {
      const out = [];
      if (m.stuck) out.push(`stuck ${m.stuck}`);
      if (!m.drained) out.push('the queue did not drain');
      if (m.lost > 80) out.push(`lost ${m.lost}: more than about a second of adds (60/s)`);
      return out;
    },
  },
  {
    id: 'redis-freeze',
    title: 'Redis frozen (SIGSTOP) longer than the lock, then SIGCONT',
    promise: 'No client hangs forever on a frozen Redis; work resumes after it thaws, nothing lost.',
    produce: produce(400, 40),
    inject: async (ctx) => {
      await sleep(3_000);
      const from = Date.now();
      ctx.redis.freeze();
      await sleep(LOCK.lockDuration + 2 * LOCK.stalledInterval);
      ctx.redis.thaw();
      ctx.windows.push({ from, to: Date.now() + LOCK.lockDuration });
    },
    verdict: (m) => [...base(m), ...(m.adds.pending ? [`${m.adds.pending} adds never returned`] : [])],
  },
  {
    id: 'redis-restart-empty',
    title: 'Redis restart without persistence (dataset reset)',
    promise:
      'A dataset reset under running workers and producers is reported as DatasetResetError, never taken for an empty healthy queue.',
    redis: { persistence: 'none' },
    produce: produce(300, 50),
    inject: (ctx) => killRedis(ctx, 2_000, 500),
    verdict: (m) => {
      const out = [];
      if (!m.errors.DatasetResetError) out.push('no worker reported a DatasetResetError');
      if (!m.queueErrors.DatasetResetError) out.push('the producer did not report a DatasetResetError');
      if (m.stuck) out.push(`stuck ${m.stuck}`);
      if (!m.drained) out.push('the queue did not drain after the reset');
      return out;
    },
  },
  {
    id: 'memory-pressure-locks',
    title: 'Memory pressure held longer than the lock, long jobs running',
    promise: 'While Redis is full (noeviction), running jobs keep their locks and their completions are recorded: nothing runs twice.',
    redis: { persistence: 'none', maxmemory: '4mb' },
    removeOnComplete: true,
    workers: 2,
    produce: (ctx) =>
      ctx.producer.run({
        count: 9000,
        perSecond: 1000,
        inFlight: 16,
        data: (i) => (i < 40 && i % 5 === 0 ? { ms: 6_000 } : { ms: 20, pad: 'x'.repeat(4000) }),
      }),
    inject: async () => {},
    drainMs: 30_000,
    verdict: (m) => {
      const out = base(m, { dupes: 'none' });
      if (!m.adds.error) out.push('no add was refused: the row did not reach maxmemory');
      if (m.stalled) out.push(`${m.stalled} stalls while Redis was full`);
      return out;
    },
  },
  {
    id: 'memory-pressure',
    title: 'Memory pressure: maxmemory with noeviction',
    promise:
      'When Redis is full (noeviction), adds fail with an error at the producer, nothing acknowledged is lost, and workers keep draining.',
    redis: { persistence: 'none', maxmemory: '4mb' },
    removeOnComplete: true,
    workers: 2,
    produce: (ctx) => ctx.producer.run({ count: 3000, perSecond: 600, data: () => ({ ms: 20, pad: 'x'.repeat(4000) }) }),
    inject: async () => {},
    drainMs: 30_000,
    verdict: (m) => {
      const out = base(m);
      if (!m.adds.error) out.push('no add was refused: the row did not reach maxmemory');
      if (m.adds.unknown) out.push(`${m.adds.unknown} adds ended with an unclassified error`);
      return out;
    },
  },
];

export { LOCK };
