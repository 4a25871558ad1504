/**
 * Bounded work: management calls loop from TypeScript in batches, so a huge clean never holds
 * the backend (Redis, or SQLite's write lock) long enough to stall other workers' lock renewals.
 */
import { describe, expect, it } from 'vitest';
import { collect, once, signal } from '../helpers/wait.js';
import { TEST_BACKEND, useHopper } from '../helpers/hopper.js';
import { slowCalls } from '../helpers/slowlog.js';

const env = useHopper();

/** One step of a clean, as the test saw it at the backend seam. */
interface Step {
  removed: number;
  /** CPU time of this process over the call, ms: on SQLite, the step's transaction's own time. */
  cpuMs: number;
}

describe('bounded work', () => {
  it('lock renewals of a busy worker keep succeeding during a 200,000-job clean', async () => {
    const name = env.queueName('big');
    const queue = env.queue(name);
    const busyName = env.queueName('busy');
    const busyQueue = env.queue(busyName);
    for (let i = 0; i < 200_000; i += 1000) {
      await queue.addBulk(Array.from({ length: 1000 }, (_, j) => ({ name: 'x', data: { i: i + j } })));
    }
    await busyQueue.addBulk(Array.from({ length: 4 }, (_, i) => ({ name: 'long', data: { i }, opts: { removeOnComplete: false } })));
    // A busy worker whose locks expire after 1 s unless renewed (every 200 ms); a second
    // worker checks for stalled jobs every 100 ms and would rescue any lock left to expire.
    const lockDuration = 1000;
    const release = signal();
    const lost: unknown[] = [];
    const busy = env.worker(
      busyName,
      async (_job, _token, abort) => {
        abort?.addEventListener('abort', () => lost.push(abort.reason));
        await release.promise;
      },
      { concurrency: 4, lockDuration, lockRenewTime: 200 },
    );
    await collect(busy, 'active', 4);
    // Started once the busy worker holds the 4 jobs (else it may take one of them itself).
    const watcher = env.worker(busyName, async () => undefined, { stalledInterval: 100, autorun: true, concurrency: 1 });
    const stalled: string[] = [];
    watcher.on('stalled', (id: string) => stalled.push(id));
    await watcher.waitUntilReady();

    // Each step of the clean, seen at the backend seam. On SQLite a step's transaction runs in
    // this process between two awaits, so the CPU time over the call is the step's own time,
    // whatever the machine's load; on Redis the server's slow log times each step's script.
    const steps: Step[] = [];
    const clean = queue.backend.clean.bind(queue.backend);
    queue.backend.clean = async (...args) => {
      const cpu0 = process.cpuUsage();
      const step = await clean(...args);
      const cpu = process.cpuUsage(cpu0);
      steps.push({ removed: step.ids.length, cpuMs: (cpu.user + cpu.system) / 1000 });
      return step;
    };
    // Another client asks all along the clean; each answer notes how many steps had ended by then.
    let cleaning = true;
    const answeredAfter: number[] = [];
    const probe = (async () => {
      while (cleaning) {
        await busyQueue.getJobCounts('active');
        answeredAfter.push(steps.length);
      }
    })();
    const removed = await queue.clean(0, 0, 'wait');
    cleaning = false;
    await probe;
    release.resolve();
    await collect(busy, 'completed', 4);

    expect(removed).toHaveLength(200_000);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 0 });
    // The busy worker's locks were all renewed in time: none lost, nothing rescued as stalled.
    expect(lost).toEqual([]);
    expect(stalled).toEqual([]);
    const jobs = await busyQueue.getCompleted();
    expect(jobs.map((j) => j.stalledCounter)).toEqual([0, 0, 0, 0]);
    // The clean went in bounded steps of at most 1,000 jobs...
    expect(steps.length).toBeGreaterThanOrEqual(200);
    expect(Math.max(...steps.map((s) => s.removed))).toBeLessThanOrEqual(1000);
    expect(steps.reduce((n, s) => n + s.removed, 0)).toBe(200_000);
    // ...and the backend answered the other client between them, all along (a single call of
    // this size would hold it for seconds, leaving the probe an answer or two).
    expect(new Set(answeredAfter).size).toBeGreaterThan(20);
    // And no step held the backend as long as a lock's whole duration (1 s here, the delay that
    // would let a lock expire), timed by the backend itself rather than by a client's wall clock,
    // which on a busy machine includes the client's CPU scheduling (a probe's wait reached 1.2 s
    // under CI load with no step near that). Redis: the server's time for each step's script, from
    // its slow log (steps of 10 ms or more; tens of ms each, ~220 ms at most at a load average of
    // 10 on 2 cores). SQLite: each step's transaction's CPU time (~16 ms, 36 ms at most there).
    const stepTimes =
      TEST_BACKEND === 'sqlite'
        ? steps.map((s) => s.cpuMs)
        : (await slowCalls(env.url, `${env.prefix}:{${name}}:`)).filter((c) => /_clean$/.test(c.args[1] ?? '')).map((c) => c.ms);
    expect(Math.max(0, ...stepTimes)).toBeLessThan(lockDuration);
    await once(watcher, 'drained').catch(() => undefined);
  }, 120_000);
});
