// The rows of the fault suite: each a workload, a fault schedule and its pass criterion (issue 14).
// `verdict` returns the criteria a run missed (empty: pass). Rows that need a topology or a tool
// (Sentinel, Cluster, faketime) are in rows-ha.mjs and rows-time.mjs.
import { LOCK, sleep } from './lib/run-row.mjs';
import {
  base,
  isOccurrence,
  isolateWorker,
  killRandomly,
  killRedis,
  PAST_LOCK_MS,
  produce,
  produceUntilResumed,
  resumedCriteria,
  schedulerCriteria,
  startScheduler,
  stopScheduler,
  work,
} from './lib/row-kit.mjs';
import { HA_ROWS } from './rows-ha.mjs';
import { NETNS_ROWS } from './rows-netns.mjs';
import { TIME_ROWS } from './rows-time.mjs';

/** The memory rows: Redis refused adds, each with a RedisFullError (an untyped refusal counts as unknown). */
function refusedAsFull(m) {
  const out = [];
  const full = m.addErrors['error RedisFullError']?.count ?? 0;
  if (!m.adds.error) out.push('no add was refused: the row did not reach maxmemory');
  if (full !== m.adds.error) out.push(`${m.adds.error - full} refused adds were not RedisFullError`);
  if (m.adds.unknown) out.push(`${m.adds.unknown} adds ended with an error that is not a typed refusal: ${JSON.stringify(m.addErrors)}`);
  return out;
}

/** The half-open row's user-set reply deadline (ioredis `socketTimeout`), below Hopper's default (10 s). */
const SOCKET_TIMEOUT_MS = 6_000;

/**
 * A worker whose connections go half-open (blackhole) for longer than the lock. `socketTimeout`:
 * the worker connects with ioredis's `socketTimeout` (a user's own reply deadline, kept by
 * Hopper); without it, with Hopper's default connection options (its default reply deadline).
 */
function halfOpenRow(socketTimeout) {
  return {
    id: socketTimeout ? 'network-half-open' : 'network-half-open-defaults',
    title: `Half-open connections (blackhole) between a worker and Redis, longer than the lock${socketTimeout ? ', socketTimeout set' : ', default connection options'}`,
    promise:
      'A worker whose connections go silent without closing does not hang: its jobs are rescued and redone by the others, its late completions are rejected, and it takes work again once the network heals' +
      (socketTimeout
        ? ` (with the user's ioredis socketTimeout, here ${SOCKET_TIMEOUT_MS} ms).`
        : " (default connection options: Hopper's reply deadline)."),
    workers: 2,
    produce: produceUntilResumed,
    inject: (ctx) =>
      isolateWorker(ctx, {
        ms: PAST_LOCK_MS,
        fault: (p) => p.blackhole(),
        overrides: socketTimeout
          ? (proxy) => ({
              connection: { kind: 'options', options: { host: '127.0.0.1', port: proxy.port, socketTimeout: SOCKET_TIMEOUT_MS } },
            })
          : undefined,
      }),
    drainMs: 30_000,
    verdict: (m, ctx) => [...base(m), ...resumedCriteria(m, ctx)],
  };
}

/**
 * A job scheduler (every 500 ms, default policies) while workers are killed, three times just as a
 * process fired an occurrence (before it advances the scheduler) and three times at random. An
 * occurrence held by a killed process stays unfinished until its lock expires, so the ones due
 * meanwhile are skipped by the default overlap policy ('skip') and counted by the scheduler:
 * counted, not lost.
 */
const schedulersKillRow = {
  id: 'schedulers-sigkill',
  title: "Worker SIGKILL as it fires a scheduler's occurrence and at random moments (every 500 ms)",
  // Its criteria are timed (every 500 ms, late by at most 5 s): run alone under --jobs.
  alone: true,
  promise:
    'A job scheduler keeps its schedule through worker kills: no occurrence is created twice or runs early, and every instant of the schedule either ran or is counted by the scheduler (skipped by overlap while a killed run is unfinished, or missed); an interrupted occurrence runs again like any job.',
  unledgered: isOccurrence,
  workerConfig: { reportOccurrences: true },
  onOccurrence: (pool, child, id, attempt) => {
    pool.occurrencesSeen = (pool.occurrencesSeen ?? 0) + 1;
    pool.occurrenceKills ??= 0;
    if (attempt === 1 && pool.occurrencesSeen % 3 === 2 && pool.occurrenceKills < 3) {
      pool.occurrenceKills++;
      pool.signal(child, 'SIGKILL', 'SIGKILL-after-firing');
    }
  },
  produce: async (ctx) => {
    await startScheduler(ctx, 500);
    await ctx.producer.run({ count: 500, perSecond: 50, data: work(50, 100)(ctx.rand) });
  },
  inject: killRandomly(3),
  heal: async (ctx) => {
    // Past the last kill's lock, so the last interrupted occurrence is rescued and the schedule resumes.
    await sleep(PAST_LOCK_MS);
    await stopScheduler(ctx);
  },
  verdict: (m, ctx) => {
    const out = [...base(m), ...schedulerCriteria(m, ctx, { lateMs: 8_000, counted: true })];
    if (!ctx.pool.occurrenceKills) out.push('no process was killed as it fired an occurrence: nothing was tested');
    return out;
  },
};

/**
 * Rows that reproduce a finding not fixed yet (docs/reliability.md, Findings): they fail, so
 * they are not in the quick tier; run them by name (--rows). None today.
 */
export const FINDING_ROWS = [];

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
    id: 'steps-sigkill',
    title: 'Worker SIGKILL at random moments, jobs made of durable steps',
    promise: 'A step whose result was recorded before a kill never runs again; the job finishes from where it stopped.',
    maxStalledCount: 3,
    produce: produce(300, 40, (rand) => () => ({ steps: 3, stepMs: 100 + Math.floor(rand() * 200) })),
    inject: async (ctx) => {
      await sleep(1_000);
      for (let i = 0; i < 6; i++) {
        ctx.pool.signal(ctx.pool.pick(ctx.rand), 'SIGKILL');
        await sleep(700 + Math.floor(ctx.rand() * 900));
      }
    },
    verdict: (m) => {
      const out = base(m);
      const recorded = new Map();
      for (const r of m.records) if (r.t === 'step-recorded' && !recorded.has(`${r.id}/${r.step}`)) recorded.set(`${r.id}/${r.step}`, r.at);
      let again = 0;
      let steps = 0;
      for (const r of m.records) {
        if (r.t !== 'step') continue;
        steps++;
        const at = recorded.get(`${r.id}/${r.step}`);
        if (at !== undefined && r.at > at) {
          again++;
          if (again <= 5) out.push(`${r.id} step ${r.step} ran again after its result was recorded`);
        }
      }
      if (again) out.push(`${again} recorded steps ran again`);
      if (!steps) out.push('no step ran');
      return out;
    },
  },
  {
    id: 'groups-sigkill',
    title: 'Worker SIGKILL at random moments, grouped jobs with a group concurrency of 2',
    promise: "A killed worker's group slots are given back when its jobs are rescued: no group is left blocked, no job stuck.",
    produce: async (ctx) => {
      await ctx.producer.queue.setGroupDefaults({ concurrency: 2 });
      await ctx.producer.run({
        count: 500,
        perSecond: 60,
        data: () => ({ ms: 50 + Math.floor(ctx.rand() * 100) }),
        opts: (i) => ({ group: { id: `g${i % 6}` } }),
      });
    },
    inject: killRandomly(6),
    verdict: (m) => base(m),
  },
  {
    id: 'flows-sigkill',
    title: 'Worker SIGKILL at random moments, flows (a parent and three children)',
    promise: 'Parents finish after their children whatever the kills: no parent is left waiting for a child that finished or vanished.',
    maxStalledCount: 3,
    produce: (ctx) =>
      ctx.producer.run({
        count: 150,
        perSecond: 15,
        idPrefix: 'p',
        add: (id) => ctx.producer.addFlow(id, { ms: 50 + Math.floor(ctx.rand() * 150) }, [`${id}c1`, `${id}c2`, `${id}c3`]),
      }),
    inject: killRandomly(6),
    verdict: (m, ctx, states) => {
      const out = base(m);
      for (const [id, state] of states) {
        if (!/c\d$/.test(id) && state !== 'completed') out.push(`parent ${id} ended ${state}`);
      }
      return out.slice(0, 12);
    },
  },
  schedulersKillRow,
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
      await ctx.pool.freeze(child, PAST_LOCK_MS);
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
      (rand) => (i) => (i % 100 === 20 ? { blockMs: PAST_LOCK_MS, blockOnce: true } : { ms: 20 + Math.floor(rand() * 60) }),
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
    produce: produce(100, 25, (rand) => (i) => (i % 40 === 10 ? { blockMs: PAST_LOCK_MS } : { ms: 20 + Math.floor(rand() * 60) })),
    inject: async () => {},
    drainMs: 30_000,
    verdict: (m) => [
      ...base(m, { dupes: 'none' }),
      ...(m.stalled ? [`${m.stalled} stalls`] : []),
      ...(m.failed ? [`failed ${m.failed}`] : []),
    ],
  },
  {
    id: 'network-partition-short',
    title: 'Network partition between a worker and Redis, shorter than the lock',
    promise: 'A partition shorter than the lock (minus one renewal interval) costs nothing: no stall, no duplicate.',
    workers: 2,
    produce: produce(300, 40, work(200, 300)),
    inject: (ctx) => isolateWorker(ctx, { ms: LOCK.lockDuration / 2 - 500, fault: (p) => p.partition() }),
    verdict: (m) => [...base(m, { dupes: 'none' }), ...(m.stalled ? [`${m.stalled} stalls`] : [])],
  },
  {
    id: 'network-partition-long',
    title: 'Network partition between a worker and Redis, longer than the lock',
    promise:
      "An isolated worker's jobs are rescued and redone by the others; its completions, delivered after the partition heals, are rejected.",
    workers: 2,
    produce: produce(300, 40, work(200, 300)),
    inject: (ctx) => isolateWorker(ctx, { ms: PAST_LOCK_MS, fault: (p) => p.partition() }),
    verdict: (m) => base(m),
  },
  {
    id: 'network-reset',
    title: "Worker's connections reset (RST) under load",
    promise: 'A worker whose connections drop reconnects, releases what a lost reply claimed, and loses nothing.',
    workers: 2,
    produce: produce(300, 40, work(100, 200)),
    inject: (ctx) =>
      isolateWorker(ctx, {
        ms: 3_000,
        fault: (p) => {
          p.reset();
          setTimeout(() => p.reset(), 1_000);
          setTimeout(() => p.reset(), 2_000);
        },
      }),
    verdict: (m) => base(m),
  },
  {
    id: 'network-latency',
    title: 'Added latency (300 ms each way) between a worker and Redis',
    promise: 'Latency well under the lock slows a worker down and nothing else: no stall, no duplicate.',
    workers: 2,
    produce: produce(300, 40, work(100, 200)),
    inject: (ctx) => isolateWorker(ctx, { ms: 6_000, fault: (p) => p.latency(300) }),
    verdict: (m) => [...base(m, { dupes: 'none' }), ...(m.stalled ? [`${m.stalled} stalls`] : [])],
  },
  halfOpenRow(false),
  halfOpenRow(true),
  ...NETNS_ROWS,
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
    id: 'redis-kill-repeated',
    title: 'Redis SIGKILL and restart four times under load, AOF appendfsync always',
    promise: 'Reconnecting workers release only the jobs claimed by calls whose reply they lost, never a job they are running.',
    redis: { persistence: 'always' },
    produce: produce(900, 60),
    inject: async (ctx) => {
      for (let i = 0; i < 4; i++) await killRedis(ctx, 2_000, 300 + Math.floor(ctx.rand() * 700));
    },
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
    scale: false, // its adds must fill Redis
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
      const out = [...base(m, { dupes: 'none' }), ...refusedAsFull(m)];
      if (m.stalled) out.push(`${m.stalled} stalls while Redis was full`);
      return out;
    },
  },
  {
    id: 'memory-pressure',
    title: 'Memory pressure: maxmemory with noeviction',
    promise:
      'When Redis is full (noeviction), adds fail with a RedisFullError at the producer, nothing acknowledged is lost, and workers keep draining.',
    redis: { persistence: 'none', maxmemory: '4mb' },
    scale: false, // its adds must fill Redis
    removeOnComplete: true,
    workers: 2,
    produce: (ctx) => ctx.producer.run({ count: 3000, perSecond: 600, data: () => ({ ms: 20, pad: 'x'.repeat(4000) }) }),
    inject: async () => {},
    drainMs: 30_000,
    verdict: (m) => [...base(m), ...refusedAsFull(m)],
  },
  ...TIME_ROWS,
  ...HA_ROWS,
];

export { LOCK };
