/**
 * Refusals that must stay with the job that earns them, and ids and states that must not be
 * misread:
 * - adds made in the same tick go to the backend in one call; a group's maxSize refusal of one of
 *   them fails only that add, the others are written;
 * - a flow whose child has the root's id, or two nodes with one id, is refused with a typed error
 *   before anything is written;
 * - retryJobs and job.retry refuse `state: 'active'` (an active job is never started a second time)
 *   and names that are not states ('constructor', 'meta', 'bogus').
 */
import { describe, expect, it } from 'vitest';
import { GroupMaxSizeExceededError, InvalidOptionsError, type Job } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';
import { once, signal } from '../helpers/wait.js';

const env = useHopper();

describe("a group's maxSize among adds of the same tick", () => {
  it('refuses only the add that overflows its group', async () => {
    const name = env.queueName('gmax');
    const queue = env.queue(name);
    await queue.add('first', {}, { group: { id: 'full', maxSize: 1 } });
    const results = await Promise.allSettled([
      queue.add('a', { n: 1 }),
      queue.add('over', {}, { group: { id: 'full', maxSize: 1 } }),
      queue.add('b', { n: 2 }, { group: { id: 'other' } }),
      queue.add('c', { n: 3 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(GroupMaxSizeExceededError);
    expect(await queue.count()).toBe(4);
    const names = (await queue.getJobs(['waiting', 'prioritized'])).map((j) => j.name).sort();
    expect(names).toEqual(['a', 'b', 'c', 'first']);
  });
});

describe('flow ids', () => {
  it("refuses a child whose jobId is the root's, writing nothing", async () => {
    const name = env.queueName('fself');
    const queue = env.queue(name);
    const flows = env.flows();
    const err = await flows
      .add({
        name: 'root',
        queueName: name,
        opts: { jobId: 'same' },
        children: [{ name: 'child', queueName: name, opts: { jobId: 'same' } }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionsError);
    expect((err as Error).message).toMatch(/same/);
    expect(await queue.getJob('same')).toBeUndefined();
    expect(await queue.count()).toBe(0);
  });

  it('refuses two nodes of one flow with the same id (queue and jobId), writing nothing', async () => {
    const name = env.queueName('fdup');
    const queue = env.queue(name);
    const flows = env.flows();
    const err = await flows
      .add({
        name: 'root',
        queueName: name,
        children: [
          { name: 'a', queueName: name, opts: { jobId: 'twin' } },
          { name: 'b', queueName: name, children: [{ name: 'c', queueName: name, opts: { jobId: 'twin' } }] },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidOptionsError);
    expect((err as Error).message).toMatch(/twin/);
    expect(await queue.count()).toBe(0);
    expect(await queue.getJobCounts('waiting-children', 'waiting')).toEqual({ 'waiting-children': 0, waiting: 0 });
  });

  it('accepts one jobId in two different queues of a flow', async () => {
    const a = env.queueName('fa');
    const b = env.queueName('fb');
    const flows = env.flows();
    const tree = await flows.add({
      name: 'root',
      queueName: a,
      opts: { jobId: 'x1' },
      children: [{ name: 'c', queueName: b, opts: { jobId: 'x1' } }],
    });
    expect(tree.job.id).toBe('x1');
    expect(tree.children?.[0].job.id).toBe('x1');
  });
});

describe('retry states', () => {
  it('retryJobs and job.retry refuse active, and names that are not states', async () => {
    const name = env.queueName('rs');
    const queue = env.queue(name);
    const running = signal();
    const release = signal();
    const worker = env.worker(name, async () => {
      running.resolve();
      await release.promise;
      return 'ok';
    });
    const job = await queue.add('x', {}, { removeOnComplete: false });
    await running.promise;
    for (const state of ['active', 'constructor', 'meta', 'bogus', '__proto__', 'toString']) {
      await expect(queue.retryJobs({ state: state as 'failed' })).rejects.toBeInstanceOf(InvalidOptionsError);
      await expect(job.retry(state as 'failed')).rejects.toBeInstanceOf(InvalidOptionsError);
    }
    expect(await job.getState()).toBe('active');
    const done = once<[Job]>(worker, 'completed');
    release.resolve();
    await done;
    // The one run: it completed once, and nothing started it again.
    expect(await job.getState()).toBe('completed');
    expect((await queue.getJob(job.id as string))?.attemptsStarted).toBe(1);
  });
});
