import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { collect, once, signal, until } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('Worker processing', () => {
  it('processes a job, stores its return value and emits completed', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('double', { n: 21 }, { removeOnComplete: false });
    const worker = env.worker<{ n: number }, number>(name, async (j) => j.data.n * 2);
    const [done, result, prev] = await once<[Job, number, string]>(worker, 'completed');
    expect(done.id).toBe(job.id);
    expect(result).toBe(42);
    expect(prev).toBe('active');
    expect(done.attemptsMade).toBe(1);
    const stored = await queue.getJob(job.id as string);
    expect(stored?.returnvalue).toBe(42);
    expect(await stored?.getState()).toBe('completed');
    expect(stored?.finishedOn).toBeGreaterThanOrEqual(stored?.processedOn ?? Infinity);
    expect(stored?.attemptsMade).toBe(1);
    expect(stored?.attemptsStarted).toBe(1);
  });

  it('hands the processor its token and an AbortSignal', async () => {
    const name = env.queueName();
    await env.queue(name).add('x', {});
    const seen = signal<[string | undefined, AbortSignal | undefined]>();
    env.worker(name, async (_job, token, abort) => {
      seen.resolve([token, abort]);
    });
    const [token, abort] = await seen.promise;
    expect(token).toMatch(/^[\w-]+:\d+:\d+$/);
    expect(abort).toBeInstanceOf(AbortSignal);
    expect(abort?.aborted).toBe(false);
  });

  it('runs jobs in FIFO order at concurrency 1, lifo jobs first', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([1, 2, 3, 4].map((i) => ({ name: 'n', data: { i } })));
    await queue.add('n', { i: 0 }, { lifo: true });
    const order: number[] = [];
    const worker = env.worker<{ i: number }>(name, async (job) => {
      order.push(job.data.i);
    });
    await collect(worker, 'completed', 5);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('runs unprioritized jobs first, then lower priority first, FIFO within a priority', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk([
      { name: 'p', data: { tag: 'p5-a' }, opts: { priority: 5 } },
      { name: 'p', data: { tag: 'p1-a' }, opts: { priority: 1 } },
      { name: 'p', data: { tag: 'none-a' } },
      { name: 'p', data: { tag: 'p5-b' }, opts: { priority: 5 } },
      { name: 'p', data: { tag: 'p1-b' }, opts: { priority: 1 } },
      { name: 'p', data: { tag: 'none-b' } },
    ]);
    const order: string[] = [];
    const worker = env.worker<{ tag: string }>(name, async (job) => {
      order.push(job.data.tag);
    });
    await collect(worker, 'completed', 6);
    expect(order).toEqual(['none-a', 'none-b', 'p1-a', 'p1-b', 'p5-a', 'p5-b']);
  });

  it('respects concurrency: fills every slot, never more than n jobs at once', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'n', data: { i } })));
    let running = 0;
    let peak = 0;
    const full = signal();
    const worker = env.worker(
      name,
      async () => {
        running++;
        peak = Math.max(peak, running);
        if (running === 7) full.resolve();
        // Hold the first jobs until all 7 slots are taken, so a short job cannot hide a slot left empty.
        await full.promise;
        await new Promise((r) => setImmediate(r));
        running--;
      },
      { concurrency: 7 },
    );
    await collect(worker, 'completed', 60);
    expect(peak).toBe(7);
    expect(await queue.getJobCounts('waiting', 'active')).toEqual({ waiting: 0, active: 0 });
  });

  it('processes each of many jobs exactly once across several workers', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const total = 600;
    await queue.addBulk(Array.from({ length: total }, (_, i) => ({ name: 'n', data: { i } })));
    const seen = new Map<number, number>();
    const processor = async (job: Job<{ i: number }>): Promise<void> => {
      seen.set(job.data.i, (seen.get(job.data.i) ?? 0) + 1);
    };
    const counts = [0, 0, 0];
    const allDone = signal();
    let completed = 0;
    for (let w = 0; w < 3; w++) {
      const worker = env.worker(name, processor, { concurrency: 10 * (w + 1) });
      worker.on('completed', () => {
        counts[w]++;
        if (++completed === total) allDone.resolve();
      });
    }
    await allDone.promise;
    expect(seen.size).toBe(total);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it('picks up a job added while idle (woken by the producer, not a poll)', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async (job) => job.data, { drainDelay: 60 });
    await once(worker, 'drained');
    const started = Date.now();
    await queue.add('late', { v: 1 });
    await once(worker, 'completed');
    // With a 60 s blocking timeout, only the producer's wake-up can explain a prompt start.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('runs a delayed job after its delay, woken by a timer', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => 'ok', { drainDelay: 60 });
    await once(worker, 'drained');
    const job = await queue.add('later', {}, { delay: 300 });
    const [done] = await once<[Job]>(worker, 'completed');
    expect(done.id).toBe(job.id);
    expect((done.processedOn ?? 0) - done.timestamp).toBeGreaterThanOrEqual(300);
  });

  it('emits active and progress, and stores progress and logs', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('x', {}, { removeOnComplete: false });
    const worker = env.worker(name, async (j) => {
      await j.updateProgress(50);
      await j.updateProgress({ step: 'two' });
      await j.log('first line');
      expect(await j.log('second line')).toBe(2);
    });
    const active = once(worker, 'active');
    const progress = collect<[Job, unknown]>(worker, 'progress', 2);
    await once(worker, 'completed');
    await active;
    expect((await progress).map(([, p]) => p)).toEqual([50, { step: 'two' }]);
    const stored = await queue.getJob(job.id as string);
    expect(stored?.progress).toEqual({ step: 'two' });
  });

  it('pauses and resumes a worker', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, async () => undefined);
    await worker.waitUntilReady();
    await worker.pause();
    expect(worker.isPaused()).toBe(true);
    await queue.add('x', {});
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    worker.resume();
    await once(worker, 'completed');
    expect(worker.isPaused()).toBe(false);
  });

  it('does not take jobs from a paused queue until it resumes', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.pause();
    const worker = env.worker(name, async () => undefined);
    await queue.add('x', {});
    await worker.waitUntilReady();
    expect(await queue.getJobCounts('waiting', 'active')).toEqual({ waiting: 1, active: 0 });
    const done = once(worker, 'completed');
    await queue.resume();
    await done;
  });

  it('moves due delayed jobs to waiting while the queue is paused, without running them', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.pause();
    let ran = 0;
    // drainDelay 30 s: only the worker's timer for the next due time can promote the job in time.
    const worker = env.worker(name, async () => void ran++, { drainDelay: 30 });
    await worker.waitUntilReady();
    const job = await queue.add('later', {}, { delay: 300 });
    expect(await job.getState()).toBe('delayed');
    await until(async () => (await job.getState()) === 'waiting', 'the delayed job was promoted', 5_000);
    expect(ran).toBe(0);
    const done = once(worker, 'completed');
    await queue.resume();
    await done;
    expect(ran).toBe(1);
  });

  it('close() waits for the active job to finish and records it', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('slow', {}, { removeOnComplete: false });
    const started = signal();
    const release = signal();
    const worker = env.worker(name, async () => {
      started.resolve();
      await release.promise;
      return 'finished';
    });
    await started.promise;
    const closing = worker.close();
    release.resolve();
    await closing;
    expect(worker.isRunning()).toBe(false);
    expect(await (await queue.getJob(job.id as string))?.getState()).toBe('completed');
  });
});
