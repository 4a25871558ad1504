/**
 * A group at its concurrency limit is released by every way a job can leave active: complete,
 * fail, retry, stall rescue, cancel, timeout, moveToDelayed, RateLimitError and
 * moveToWaitingChildren. Each case: group A (concurrency 1) holds a1 (active) and a2 (waiting);
 * while a1 is held the group is 'maxed' and a2 does not start; once a1 leaves active, a2 runs,
 * and a1 ends where that way sends it. On an injected clock (timeouts, delays and lock expiry
 * happen when the test advances it); the audit after each test checks the group's counts.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { DelayedError, WaitingChildrenError, Worker, type Job } from '../../src/index.js';
import { once, signal, waitFor } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

type Way = 'complete' | 'fail' | 'retry' | 'stall' | 'cancel' | 'timeout' | 'moveToDelayed' | 'RateLimitError' | 'moveToWaitingChildren';

/** Where a1 ends, and the order the jobs ran in (after a1's first run). */
const expected: Record<Way, { state: string; attemptsMade: number; then: string[] }> = {
  complete: { state: 'completed', attemptsMade: 1, then: ['a2'] },
  fail: { state: 'failed', attemptsMade: 1, then: ['a2'] },
  // Retried at once: behind a2 in its group.
  retry: { state: 'completed', attemptsMade: 2, then: ['a2', 'a1'] },
  // Rescued to the head of its group.
  stall: { state: 'completed', attemptsMade: 1, then: ['a1', 'a2'] },
  cancel: { state: 'failed', attemptsMade: 1, then: ['a2'] },
  timeout: { state: 'failed', attemptsMade: 1, then: ['a2'] },
  // Delayed 5 s: a2 runs meanwhile, a1 when the clock reaches its time.
  moveToDelayed: { state: 'completed', attemptsMade: 1, then: ['a2', 'a1'] },
  // Back at the head of its group, no attempt spent.
  RateLimitError: { state: 'completed', attemptsMade: 1, then: ['a1', 'a2'] },
  // a2 and the child run while a1 waits; a1 runs again once the child is done.
  moveToWaitingChildren: { state: 'completed', attemptsMade: 1, then: ['a2', 'child', 'a1'] },
};

describe('groups: a group at its concurrency limit is released by each way a job leaves active', () => {
  it.each(Object.keys(expected) as Way[])('%s', async (way) => {
    const name = env.queueName();
    const queue = env.queue(name);
    const clock = env.clock!;
    await queue.setGroupConcurrency('A', 1);
    const a1 = await queue.add(
      'a1',
      {},
      {
        group: { id: 'A' },
        removeOnComplete: false,
        attempts: way === 'retry' ? 2 : 1,
        ...(way === 'timeout' ? { timeout: 1000 } : {}),
      },
    );
    await queue.add('a2', {}, { group: { id: 'A' }, removeOnComplete: false });

    const runs: string[] = [];
    const finished = new EventEmitter();
    const done = new Set<string>();
    const gate = signal();
    // The child waits until a1 has moved to waiting-children (else it could finish first).
    const parked = signal();
    let firstRun = true;
    const processor = async (job: Job, token?: string, abort?: AbortSignal): Promise<string> => {
      runs.push(job.name);
      if (job.name === 'child') await parked.promise;
      if (job.name !== 'a1' || !firstRun) return job.name;
      firstRun = false;
      if (way === 'cancel' || way === 'timeout') {
        await new Promise((resolve) => abort!.addEventListener('abort', resolve));
        throw abort!.reason;
      }
      await gate.promise;
      switch (way) {
        case 'fail':
        case 'retry':
          throw new Error('boom');
        case 'moveToDelayed':
          await job.moveToDelayed(clock.now() + 5000, token);
          throw new DelayedError();
        case 'RateLimitError':
          throw Worker.RateLimitError();
        case 'moveToWaitingChildren':
          await queue.add('child', {}, { parent: { id: job.id as string, queue: job.queueQualifiedName } });
          if (await job.moveToWaitingChildren(token)) {
            parked.resolve();
            throw new WaitingChildrenError();
          }
          throw new Error('the child should have been pending');
        default:
          return job.name;
      }
    };
    const watch = (worker: Worker): Worker => {
      for (const event of ['completed', 'failed'])
        worker.on(event, (job: Job) => {
          if (job.finishedOn !== undefined) done.add(job.name);
          finished.emit('finished');
        });
      return worker;
    };

    let worker: Worker;
    if (way === 'stall') {
      // a1's worker dies holding it (claimed through the seam, never renewed nor finished).
      const dead = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
      const { jobs } = await dead.claim({ count: 1, lockMs: 1000, tokenPrefix: 'dead:1:' }, clock.backendNow());
      expect(jobs.map((j) => j.id)).toEqual([a1.id]);
      await expectHeld(queue);
      clock.advance(1001);
      const rescuer = env.worker(name, null, { autorun: false });
      expect((await rescuer.stallRescuer.runOnce(true)).rescued).toEqual([a1.id]);
      expect((await queue.getGroupJobs('A')).map((j) => j.name)).toEqual(['a1', 'a2']);
      firstRun = false;
      worker = watch(env.worker(name, processor, { concurrency: 5 }));
    } else {
      worker = watch(env.worker(name, processor, { concurrency: 5 }));
      await once(worker, 'active', (j: Job) => j.name === 'a1');
      await expectHeld(queue);
      expect(runs).toEqual(['a1']);
      if (way === 'cancel') {
        expect(await queue.cancelJob(a1.id as string, 'not needed')).toBe('signalled');
        // The pub/sub message aborts it; lock renewal reports it too, should the message be missed.
        clock.advance(15_000);
      } else if (way === 'timeout') {
        clock.advance(1000);
      } else {
        gate.resolve();
      }
      if (way === 'moveToDelayed') {
        await waitFor(finished, 'finished', () => done.has('a2'));
        expect(await a1.getState()).toBe('delayed');
        // The worker armed a timer for a1's due time when its claim found nothing ready.
        clock.advance(5000);
      }
    }
    await waitFor(finished, 'finished', () => done.has('a1') && done.has('a2'));

    const want = expected[way];
    // a2 and the child take turns in either order (the child has no group).
    const ran = way === 'moveToWaitingChildren' ? [runs[0], ...runs.slice(1, -1).sort(), runs.at(-1)] : runs;
    expect(ran).toEqual(way === 'stall' ? want.then : ['a1', ...want.then]);
    const stored = (await queue.getJob(a1.id as string))!;
    expect(await stored.getState()).toBe(want.state);
    expect(stored.attemptsMade).toBe(want.attemptsMade);
    if (way === 'cancel') expect(stored.failedReason).toBe('CancelledError: not needed');
    if (way === 'timeout') expect(stored.failedReason).toMatch(/timed out/);
    if (way === 'stall') expect(stored.stalledCounter).toBe(1);
    expect(await queue.getGroup('A')).toMatchObject({ status: 'idle', active: 0, waiting: 0 });
    await worker.close();
  });
});

/** a1 holds the group's only slot: the group is parked at its limit and a2 waits. */
async function expectHeld(queue: ReturnType<typeof env.queue>): Promise<void> {
  expect(await queue.getGroup('A')).toMatchObject({ status: 'maxed', active: 1, waiting: 1 });
  expect((await queue.getGroupJobs('A')).map((j) => j.name)).toEqual(['a2']);
}
