/**
 * Sandboxed processors through the Worker: a processor file runs in child
 * processes (or threads); CPU-bound jobs do not stall locks; crashes fail one attempt; timeouts
 * end a child that ignores its signal; close leaves no child behind.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TimeoutError, type Job } from '../../src/index.js';
import type { ChildExit } from '../../src/runtime/sandbox/index.js';
import { collect, once } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();
const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/sandbox/${name}`, import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('sandboxed processors in a Worker', () => {
  for (const useWorkerThreads of [false, true]) {
    it(`runs a processor file (${useWorkerThreads ? 'worker threads' : 'child processes'}) with the job's data and progress`, async () => {
      const name = env.queueName();
      const queue = env.queue(name);
      const job = await queue.add('echo', { hello: 'sandbox' }, { removeOnComplete: false });
      const worker = env.worker(name, fixture('echo.mjs'), { useWorkerThreads });
      const [, result] = await once<[Job, { data: unknown; format: string; token: string }]>(worker, 'completed');
      expect(result.data).toEqual({ hello: 'sandbox' });
      expect(result.format).toBe('esm');
      expect(result.token).toMatch(/:/);
      expect((await queue.getJob(job.id as string))?.returnvalue).toMatchObject({ data: { hello: 'sandbox' } });
    });
  }

  for (const useWorkerThreads of [false, true]) {
    it(`forwards job.stream writes from the child in order, and refuses a write after the end (${useWorkerThreads ? 'threads' : 'processes'})`, async () => {
      const name = env.queueName();
      const queue = env.queue(name);
      const worker = env.worker(name, fixture('stream.mjs'), { useWorkerThreads });
      const completed = once<[Job, { afterEnd: { name: string; message: string } }]>(worker, 'completed');
      const job = await queue.add('gen', {}, { removeOnComplete: false });
      const [, result] = await completed;
      expect(result.afterEnd.name).toBe('InvalidStateError');
      expect(result.afterEnd.message).toMatch(/was ended/);
      const chunks: unknown[] = [];
      for await (const chunk of queue.readStream(job.id as string)) chunks.push(chunk.data);
      expect(chunks).toEqual(Array.from({ length: 50 }, (_, i) => (i % 10 === 9 ? { i } : `t${i} `)));
    });
  }

  it("gives the child's job progress, logs, data updates and durable steps, fenced in the parent", async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('hooks', { stage: 1 }, { removeOnComplete: false });
    const worker = env.worker(name, fixture('hooks.mjs'));
    const [, result] = await once<[Job, Record<string, unknown>]>(worker, 'completed');
    expect(result).toMatchObject({
      progressAfter: { percent: 50 },
      logCount: 1,
      dataAfter: { stage: 2 },
      step1: { charged: 42 },
      step2: { charged: 42 },
      ran: 1,
    });
    const stored = await queue.getJob(job.id as string);
    expect(stored?.progress).toEqual({ percent: 50 });
    expect(stored?.data).toEqual({ stage: 2 });
    expect((await stored!.getSteps()).find((s) => s.key === 'charge')?.result).toEqual({ charged: 42 });
  });

  it('a CPU-bound job in a child does not stall its lock', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const job = await queue.add('spin', { ms: 1500 }, { removeOnComplete: false });
    // Locks expire after 600 ms unless renewed; a second worker looks for stalled jobs every 100 ms.
    const worker = env.worker(name, fixture('cpu.mjs'), { lockDuration: 600, lockRenewTime: 100, autorun: false });
    const active = once(worker, 'active');
    void worker.run();
    await active;
    // Started once the job is taken, so it cannot take the job itself: it only checks for stalls.
    const watcher = env.worker(name, async () => 'should not run', { stalledInterval: 100 });
    const stalled: string[] = [];
    watcher.on('stalled', (id: string) => stalled.push(id));
    await once(worker, 'completed', () => true, 20_000);
    expect(stalled).toEqual([]);
    expect((await queue.getJob(job.id as string))?.stalledCounter).toBe(0);
  });

  it('a child that crashes fails that attempt with a clear reason; the worker keeps running', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const crash = await queue.add('x', { exit: true });
    const ok = await queue.add('x', { exit: false }, { removeOnComplete: false });
    const worker = env.worker(name, fixture('exit.mjs'));
    const [[failedJob, error]] = await collect<[Job, Error]>(worker, 'failed', 1);
    expect(failedJob.id).toBe(crash.id);
    expect(error.message).toMatch(/exit/i);
    await once(worker, 'completed');
    expect((await queue.getJob(ok.id as string))?.returnvalue).toBe('survived');
  });

  it('a timed-out child that ignores its signal is terminated after the grace period, then retried', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const worker = env.worker(name, fixture('ignore-signal.mjs'), { timeoutGrace: 300, sandbox: { killGraceMs: 200 }, autorun: false });
    const pool = worker.sandboxPool!;
    const pids: number[] = [];
    pool.on('spawned', (pid: number) => pids.push(pid));
    // What happened, in order: each child's exit (with its signal) and the job's failure (with
    // whether the first child was still alive at that instant).
    const order: string[] = [];
    pool.on('exited', (pid: number, exit: ChildExit) => order.push(`exited ${pid} ${exit.signal}`));
    void worker.run();
    // A warm child first: the timeout counts from the claim, and a child started cold on a busy
    // machine can take longer than timeout + grace to load, so the attempt would end before it
    // reached a child (no child to terminate) and the new child would run the retry.
    const warm = once(worker, 'completed');
    await queue.add('warm', { warmUp: true });
    await warm;
    expect(pids).toHaveLength(1);
    const [first] = pids;
    worker.on('failed', () => order.push(`failed, first child ${alive(first) ? 'alive' : 'gone'}`));

    const failed = collect<[Job, Error]>(worker, 'failed', 1, 20_000);
    const job = await queue.add('forever', {}, { timeout: 300, attempts: 2 });
    const [[, error]] = await failed;
    expect(error).toBeInstanceOf(TimeoutError);
    // The first attempt ran in the warm child, which ignored its signal and SIGTERM: it was
    // killed, and it was gone (reaped) before the failure was recorded; the retry came after.
    expect(order.slice(0, 2)).toEqual([`exited ${first} SIGKILL`, 'failed, first child gone']);
    const stored = await queue.getJob(job.id as string);
    expect(stored?.attemptsMade).toBe(1);
    await worker.close(true);
    expect(pids.some(alive)).toBe(false);
  }, 30_000);

  it('close() ends every child', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    await queue.addBulk(Array.from({ length: 3 }, (_, i) => ({ name: 'echo', data: { i } })));
    const worker = env.worker(name, fixture('echo.mjs'), { concurrency: 3 });
    const done = await collect<[Job, { childId: number }]>(worker, 'completed', 3);
    const pids = done.map(([, result]) => result.childId);
    expect(pids.every(alive)).toBe(true);
    await worker.close();
    expect(pids.some(alive)).toBe(false);
  });
});
