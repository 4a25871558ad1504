import { describe, expect, it } from 'vitest';
import { ClosedError, InvalidOptionsError, Worker } from '../../src/index.js';
import { collect, once, signal } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('Worker lifecycle', () => {
  it('emits ready, closing and closed, and run() resolves on close', async () => {
    const name = env.queueName();
    const worker = env.worker(name, async () => undefined, { autorun: false });
    const ready = once(worker, 'ready');
    const running = worker.run();
    await ready;
    expect(worker.isRunning()).toBe(true);
    await expect(worker.run()).rejects.toThrow('already running');
    const closing = once(worker, 'closing');
    const closed = once(worker, 'closed');
    await worker.close();
    await Promise.all([closing, closed, running]);
    expect(worker.isRunning()).toBe(false);
    await expect(worker.waitUntilReady()).rejects.toBeInstanceOf(ClosedError);
  });

  it('close(true) does not wait for active jobs: aborts their signals and releases them for another worker at once', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.add('x', {});
    const aborted = signal<boolean>();
    const worker = env.worker(name, async (_job, _token, abort) => {
      await new Promise<void>((resolve) => abort?.addEventListener('abort', () => resolve()));
      aborted.resolve(true);
      await new Promise(() => {});
    });
    await once(worker, 'active');
    await worker.close(true);
    expect(await aborted.promise).toBe(true);
    // Released at once (not left active until its lock expires), with no stall counted.
    expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: 0, waiting: 1 });
    const [job] = await queue.getJobs(['waiting']);
    expect(job.stalledCounter).toBe(0);
  });

  it('validates its options', async () => {
    const base = { connection: env.url, prefix: env.prefix };
    expect(() => new Worker('q', null, { ...base, concurrency: 0 })).toThrow(InvalidOptionsError);
    expect(() => new Worker('q', null, { ...base, lockDuration: -5 })).toThrow(InvalidOptionsError);
    expect(() => new Worker('q', null, { ...base, maxStalledCount: -1 })).toThrow(InvalidOptionsError);
    const noProcessor = env.worker(env.queueName(), null, { autorun: false });
    await expect(noProcessor.run()).rejects.toThrow('No process function is defined.');
  });

  it('changes concurrency while running', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'n', data: { i } })));
    let running = 0;
    let peak = 0;
    const gate = signal();
    const worker = env.worker(
      name,
      async () => {
        running++;
        peak = Math.max(peak, running);
        await gate.promise;
        running--;
      },
      { concurrency: 2 },
    );
    await collect(worker, 'active', 2);
    const threeMore = collect(worker, 'active', 3);
    worker.concurrency = 5;
    await threeMore;
    expect(running).toBe(5);
    expect(peak).toBe(5);
    gate.resolve();
    await once(worker, 'drained');
  });
});
