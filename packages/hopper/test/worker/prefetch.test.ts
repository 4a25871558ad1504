/**
 * Claim-ahead (the worker's `prefetch` option): a worker holds up to concurrency + prefetch
 * claimed jobs, runs at most `concurrency` at once, and starts a held-ahead job the moment a slot
 * frees. Held-ahead jobs are handed back unstarted on close and pause, end as cancelled without
 * running when cancelled, and claims never take more than a rate limit or global concurrency allows.
 * (Locks, lost locks and stall rescue: prefetch-stalls.test.ts, on an injected clock.)
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CancelledError, InvalidOptionsError, Worker, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { collect, once, signal, until } from '../helpers/wait.js';

const env = useHopper();

/** A processor that blocks each job until the test releases it; records starts in order. */
function gated() {
  const started: string[] = [];
  const gates = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const gate = (id: string) => {
    let g = gates.get(id);
    if (!g) {
      g = signal();
      gates.set(id, g);
    }
    return g;
  };
  let running = 0;
  let maxRunning = 0;
  return {
    started,
    maxRunning: () => maxRunning,
    release: (id: string) => gate(id).resolve(),
    processor: async (job: Job) => {
      started.push(job.id as string);
      running++;
      maxRunning = Math.max(maxRunning, running);
      await gate(job.id as string).promise;
      running--;
      return job.id;
    },
  };
}

describe('prefetch: options', () => {
  it('refuses a bad prefetch, and prefetch on a worker with no processor, with an InvalidOptionsError', () => {
    for (const bad of [-1, 1.5, 'x', Number.NaN, 2_000_000]) {
      expect(() => new Worker('q', async () => undefined, { connection: env.url, prefetch: bad as number, autorun: false })).toThrow(
        InvalidOptionsError,
      );
    }
    expect(() => new Worker('q', null, { connection: env.url, prefetch: 2 })).toThrow(/prefetch must be 0 for a worker with no processor/);
    // 0 is "off" and accepted everywhere.
    const manual = env.worker(env.queueName(), null, { prefetch: 0 });
    expect(manual).toBeInstanceOf(Worker);
  });
});

describe('prefetch: claiming ahead', () => {
  it('holds concurrency + prefetch jobs (active in the queue), runs concurrency at once, in claim order', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3, 4, 5].map((i) => ({ name: 'j', data: { i } })));
    const g = gated();
    const worker = env.worker(name, g.processor, { concurrency: 1, prefetch: 2 });
    await once(worker, 'active');
    // One claim took three jobs: one runs, two wait in the worker; all three are active in the queue.
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 3, waiting: 2 });
    expect(g.started).toEqual(['1']);
    const done = collect<[Job]>(worker, 'completed', 5);
    for (const id of ['1', '2', '3', '4', '5']) g.release(id);
    const completed = await done;
    expect(completed.map(([job]) => job.id)).toEqual(['1', '2', '3', '4', '5']);
    expect(g.started).toEqual(['1', '2', '3', '4', '5']);
    expect(g.maxRunning()).toBe(1);
  });

  it("counts a job's timeout from the start of its processor, not from its claim", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('slow', {});
    const quick = await queue.add('quick', {}, { timeout: 150 });
    const first = signal();
    const worker = env.worker(
      name,
      async (job) => {
        // The first job works longer than the second one's timeout, which waits held ahead meanwhile.
        if (job.name === 'slow') await new Promise((resolve) => setTimeout(resolve, 400));
        else first.resolve();
        return job.name;
      },
      { concurrency: 1, prefetch: 1 },
    );
    const done = collect<[Job]>(worker, 'completed', 2);
    await done;
    await first.promise;
    const stored = await queue.getJob(quick.id as string);
    expect(await stored?.getState()).toBe('completed');
    expect(stored?.returnvalue).toBe('quick');
    // processedOn is recorded by the claim (the job is active from then): before the first job ended.
    const slow = await queue.getJob('1');
    expect(stored?.processedOn).toBeLessThan(slow?.finishedOn as number);
    expect(worker).toBeInstanceOf(Worker);
  });

  it('never claims more than the rate limit lets start, nor more than the queue-wide concurrency', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3, 4, 5, 6].map((i) => ({ name: 'j', data: { i } })));
    const g = gated();
    const limited = env.worker(name, g.processor, { concurrency: 1, prefetch: 10, limiter: { max: 2, duration: 60_000 } });
    await once(limited, 'active');
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 2, waiting: 4 });
    await limited.close(true);

    const other = env.queueName();
    const queue2 = env.queue(other);
    await queue2.setGlobalConcurrency(3);
    await queue2.addBulk([1, 2, 3, 4, 5, 6].map((i) => ({ name: 'j', data: { i } })));
    const g2 = gated();
    const worker = env.worker(other, g2.processor, { concurrency: 1, prefetch: 10 });
    await once(worker, 'active');
    expect(await queue2.getJobCounts('active', 'waiting')).toEqual({ active: 3, waiting: 3 });
    const done = collect(worker, 'completed', 6);
    for (const id of ['1', '2', '3', '4', '5', '6']) g2.release(id);
    await done;
    expect(g2.maxRunning()).toBe(1);
  });
});

describe('prefetch: groups', () => {
  it("never claims more of a group than the group's concurrency allows", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.setGroupDefaults({ concurrency: 1 });
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'j', data: { i }, opts: { group: { id: 'a' } } })));
    await queue.addBulk([4, 5, 6].map((i) => ({ name: 'j', data: { i }, opts: { group: { id: 'b' } } })));
    const g = gated();
    const worker = env.worker(name, g.processor, { concurrency: 1, prefetch: 10 });
    await once(worker, 'active');
    // One job of each group: the group limit is applied by the claim, held-ahead jobs count in it.
    await until(async () => (worker as unknown as { heldAhead: { size: number } }).heldAhead.size === 1, 'one job held ahead');
    expect(await queue.getJobCounts('active')).toEqual({ active: 2 });
    const done = collect<[Job]>(worker, 'completed', 6);
    for (const id of ['1', '2', '3', '4', '5', '6']) g.release(id);
    expect((await done).length).toBe(6);
    expect(g.maxRunning()).toBe(1);
  });
});

describe('prefetch: processor files', () => {
  it('runs held-ahead jobs in the sandbox as slots free, never more children than concurrency', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3, 4, 5, 6].map((i) => ({ name: 'echo', data: { i } })));
    const echo = fileURLToPath(new URL('../fixtures/sandbox/echo.mjs', import.meta.url));
    const worker = env.worker(name, echo, { concurrency: 2, prefetch: 4 });
    const done = await collect<[Job, { data: { i: number } }]>(worker, 'completed', 6);
    expect(done.map(([, result]) => result.data.i).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(worker.sandboxPool?.childIds.length ?? 0).toBeLessThanOrEqual(2);
  });
});

describe('prefetch: close, pause, cancel', () => {
  it('close() finishes the running job and gives the held-ahead ones back at once, unstarted, no attempt counted', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'j', data: { i }, opts: { removeOnComplete: false } })));
    const events = env.events(name);
    await events.waitUntilReady();
    const g = gated();
    const worker = env.worker(name, g.processor, { concurrency: 1, prefetch: 2 });
    await once(worker, 'active');
    const handedBack = collect(events, 'waiting', 2);
    const closing = worker.close();
    // The held-ahead jobs are back in the queue while the running one still runs.
    await handedBack;
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 1, waiting: 2 });
    g.release('1');
    await closing;
    expect(g.started).toEqual(['1']);
    expect(await queue.getJobCounts('active', 'waiting', 'completed')).toEqual({ active: 0, waiting: 2, completed: 1 });
    for (const id of ['2', '3']) {
      const job = await queue.getJob(id);
      expect(job?.attemptsStarted).toBe(0);
      expect(job?.attemptsMade).toBe(0);
    }
  });

  it('close(true) gives back the running job and the held-ahead ones at once', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'j', data: { i } })));
    const g = gated();
    const worker = env.worker(name, g.processor, { concurrency: 1, prefetch: 2 });
    await once(worker, 'active');
    await worker.close(true);
    expect(g.started).toEqual(['1']);
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 0, waiting: 3 });
    expect((await queue.getJob('2'))?.attemptsStarted).toBe(0);
  });

  it('pause() gives the held-ahead jobs back at once and waits for the running one; resume() takes them again', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'j', data: { i } })));
    const g = gated();
    const worker = env.worker(name, g.processor, { concurrency: 1, prefetch: 2 });
    // Both held-ahead jobs arrived (two claims may be in flight: a job arriving during the pause
    // once job 1 ended would run, as any job a call in flight brings).
    await until(async () => (worker as unknown as { heldAhead: { size: number } }).heldAhead.size === 2, 'two jobs held ahead');
    const pausing = worker.pause();
    g.release('1');
    await pausing;
    expect(g.started).toEqual(['1']);
    expect(await queue.getJobCounts('active', 'waiting', 'completed')).toEqual({ active: 0, waiting: 2, completed: 1 });
    const done = collect<[Job]>(worker, 'completed', 2);
    worker.resume();
    g.release('2');
    g.release('3');
    expect((await done).map(([job]) => job.id)).toEqual(['2', '3']);
  });

  it('queue.pause() lets the held-ahead jobs run (they are active), and nothing more is claimed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3, 4, 5].map((i) => ({ name: 'j', data: { i } })));
    const g = gated();
    const worker = env.worker(name, g.processor, { concurrency: 1, prefetch: 2 });
    await until(async () => (worker as unknown as { heldAhead: { size: number } }).heldAhead.size === 2, 'two jobs held ahead');
    await queue.pause();
    const done = collect<[Job]>(worker, 'completed', 3);
    for (const id of ['1', '2', '3']) g.release(id);
    expect((await done).map(([job]) => job.id)).toEqual(['1', '2', '3']);
    const counts = await queue.getJobCounts('active', 'waiting', 'paused');
    expect(counts.active).toBe(0);
    expect(counts.waiting + counts.paused).toBe(2);
    expect(g.started).toEqual(['1', '2', '3']);
  });

  it('a held-ahead job cancelled by queue.cancelJob ends as cancelled at once, its processor never called', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'j', data: { i } })));
    const g = gated();
    const worker = env.worker(name, g.processor, { concurrency: 1, prefetch: 2 });
    await once(worker, 'active');
    const failed = once<[Job, Error]>(worker, 'failed');
    expect(await queue.cancelJob('2', 'not needed')).toBe('signalled');
    // Ends while job 1 still runs: it never waited for a slot.
    const [job, error] = await failed;
    expect(job.id).toBe('2');
    expect(error).toBeInstanceOf(CancelledError);
    expect(g.started).toEqual(['1']);
    const stored = await queue.getJob('2');
    expect(await stored?.getState()).toBe('failed');
    expect(stored?.failedReason).toBe('CancelledError: not needed');
    const done = collect<[Job]>(worker, 'completed', 2);
    g.release('1');
    g.release('3');
    expect((await done).map(([j]) => j.id)).toEqual(['1', '3']);
    expect(g.started).toEqual(['1', '3']);
  });
});
