import { describe, expect, it } from 'vitest';
import { FlowTooLargeError, InvalidOptionsError, JobActiveError, type Job } from '../../src/index.js';
import { collect } from '../helpers/wait.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();
const kept = { removeOnComplete: false, removeOnFail: false };

/** A parent in `parentQ` with two children in `childQ`, the second with a child of its own. */
async function addTree(parentQ: string, childQ: string) {
  return env.flows().add({
    name: 'parent',
    queueName: parentQ,
    opts: kept,
    children: [
      { name: 'a', queueName: childQ, opts: { ...kept, jobId: 'a' } },
      {
        name: 'b',
        queueName: childQ,
        opts: { ...kept, jobId: 'b' },
        children: [{ name: 'c', queueName: childQ, opts: { ...kept, jobId: 'c' } }],
      },
    ],
  });
}

describe('flows: removing a parent removes its tree (BullMQ removeChildren, the default)', () => {
  it('removes pending, completed and failed descendants in every queue, with a removed event each', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const parents = env.queue(parentQ);
    const children = env.queue(childQ);
    const tree = await addTree(parentQ, childQ);
    const worker = env.worker(childQ, null);
    // c completes (b moves on), a fails: the tree holds a completed, a failed and a waiting job.
    const first = (await worker.getNextJob('t'))!;
    const second = (await worker.getNextJob('t'))!;
    const [a, c] = first.id === 'a' ? [first, second] : [second, first];
    await c.moveToCompleted('done', 't', false);
    await a.moveToFailed(new Error('boom'), 't', false);
    expect(await children.getJobCounts('completed', 'failed', 'waiting')).toEqual({ completed: 1, failed: 1, waiting: 1 });

    const events = env.events(childQ);
    await events.waitUntilReady();
    const removedEvents = collect<[{ jobId: string; prev: string }]>(events, 'removed', 3);
    await tree.job.remove();
    const seen = (await removedEvents).map(([e]) => `${e.jobId}:${e.prev}`).sort();
    expect(seen).toEqual(['a:failed', 'b:waiting', 'c:completed']);
    expect(await parents.getJob(tree.job.id as string)).toBeUndefined();
    for (const id of ['a', 'b', 'c']) expect(await children.getJobState(id)).toBe('unknown');
    expect(await children.getJobCounts('completed', 'failed', 'waiting')).toEqual({ completed: 0, failed: 0, waiting: 0 });
  });

  it('queue.remove of a middle node removes its subtree and releases its parent if it was the last pending child', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const tree = await env.flows().add({
      name: 'root',
      queueName: q,
      opts: kept,
      children: [
        { name: 'mid', queueName: q, opts: { jobId: 'mid' }, children: [{ name: 'leaf', queueName: q, opts: { jobId: 'leaf' } }] },
      ],
    });
    expect(await queue.remove('mid')).toBe(1);
    expect(await queue.getJobState('leaf')).toBe('unknown');
    expect(await queue.getJobState(tree.job.id as string)).toBe('waiting');
  });

  it('removeChildren: false removes the job alone; its children stay', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const children = env.queue(childQ);
    const tree = await addTree(parentQ, childQ);
    await tree.job.remove({ removeChildren: false });
    expect(await env.queue(parentQ).getJob(tree.job.id as string)).toBeUndefined();
    expect(await children.getJobState('a')).toBe('waiting');
    expect(await children.getJobState('b')).toBe('waiting-children');
    expect(await children.getJobState('c')).toBe('waiting');
    expect(await children.remove('b', { removeChildren: false })).toBe(1);
    expect(await children.getJobState('c')).toBe('waiting');
  });

  it('refuses, removing nothing, while a job in the tree is active', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const parents = env.queue(parentQ);
    const children = env.queue(childQ);
    const tree = await addTree(parentQ, childQ);
    const worker = env.worker(childQ, null);
    const held = (await worker.getNextJob('t'))!;
    const refused = tree.job.remove();
    await expect(refused).rejects.toBeInstanceOf(JobActiveError);
    await expect(refused).rejects.toThrow(`Job ${tree.job.id} could not be removed because it is locked by another worker`);
    await expect(parents.remove(tree.job.id as string)).rejects.toThrow(
      `job ${env.prefix}:${childQ}:${held.id} in its flow tree is active`,
    );
    expect(await parents.getJobState(tree.job.id as string)).toBe('waiting-children');
    expect(await children.getJobState(held.id as string)).toBe('active');
    expect(await children.getJobCounts('waiting', 'waiting-children', 'active')).toEqual({ waiting: 1, 'waiting-children': 1, active: 1 });
    // The job itself active: BullMQ's phrase too.
    await expect(children.remove(held.id as string)).rejects.toThrow(
      `Job ${held.id} could not be removed because it is locked by another worker`,
    );
    await held.moveToCompleted('ok', 't', false);
    await tree.job.remove();
    expect(await children.getJobCounts('waiting', 'waiting-children', 'completed')).toEqual({
      waiting: 0,
      'waiting-children': 0,
      completed: 0,
    });
  });

  it('does not remove a child the parent let go of', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const children = env.queue(childQ);
    const tree = await addTree(parentQ, childQ);
    const a = (await children.getJob('a'))!;
    expect(await a.removeChildDependency()).toBe(true);
    await tree.job.remove();
    expect(await children.getJobState('a')).toBe('waiting');
    expect(await children.getJobState('b')).toBe('unknown');
    expect(await children.getJobState('c')).toBe('unknown');
  });

  it('refuses a tree of more than 1,000 child records with FlowTooLargeError, removing nothing', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const children = env.queue(childQ);
    const tree = await env.flows().add({
      name: 'big',
      queueName: parentQ,
      opts: { jobId: 'big' },
      children: Array.from({ length: 1001 }, (_, i) => ({ name: 'child', queueName: childQ, data: { i } })),
    });
    await expect(tree.job.remove()).rejects.toBeInstanceOf(FlowTooLargeError);
    await expect(tree.job.remove()).rejects.toThrow(/more than 1000 child records.*removeChildren: false/);
    expect(await env.queue(parentQ).getJobState('big')).toBe('waiting-children');
    expect(await children.getWaitingCount()).toBe(1001);
    // One child fewer fits.
    await children.remove((await children.getWaiting(0, 0))[0].id as string);
    await tree.job.remove();
    expect(await children.getWaitingCount()).toBe(0);
  });

  it('a tree too large is stopped with cancelJob, then its parent removed alone (the documented way)', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const parents = env.queue(parentQ);
    const children = env.queue(childQ);
    await env.flows().add({
      name: 'big',
      queueName: parentQ,
      opts: { jobId: 'big' },
      children: Array.from({ length: 1001 }, (_, i) => ({ name: 'child', queueName: childQ, data: { i }, opts: { removeOnFail: false } })),
    });
    await expect(parents.remove('big')).rejects.toBeInstanceOf(FlowTooLargeError);
    expect(await parents.cancelJob('big')).toBe('cancelled');
    expect(await parents.remove('big', { removeChildren: false })).toBe(1);
    expect(await parents.getJobState('big')).toBe('unknown');
    expect(await children.getJobCounts('waiting', 'failed')).toEqual({ waiting: 0, failed: 1001 });
  });

  it('refuses options it does not know, removing nothing', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const job: Job = await queue.add('x', {});
    await expect(job.remove({ removeChildren: 'yes' } as never)).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(queue.remove(job.id as string, { keepLogs: true } as never)).rejects.toThrow(/unknown option "keepLogs"/);
    expect(await job.getState()).toBe('waiting');
  });
});

describe('flows: drain and clean take a same-queue parent they release', () => {
  it('drain removes a parent of the same queue left without children, and releases one in another queue', async () => {
    const q = env.queueName();
    const other = env.queueName('p');
    const queue = env.queue(q);
    const same = await env.flows().add({
      name: 'p',
      queueName: q,
      children: [
        { name: 'c', queueName: q },
        { name: 'c', queueName: q, children: [{ name: 'g', queueName: q }] },
      ],
    });
    const elsewhere = await env.flows().add({ name: 'p', queueName: other, children: [{ name: 'c', queueName: q }] });
    await queue.drain();
    expect(await queue.getJobState(same.job.id as string)).toBe('unknown');
    expect(await queue.count()).toBe(0);
    expect(await env.queue(other).getJobState(elsewhere.job.id as string)).toBe('waiting');
  });

  it('drain keeps a released parent that is delayed unless delayed jobs are drained', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const first = await env.flows().add({ name: 'p', queueName: q, opts: { delay: 60_000 }, children: [{ name: 'c', queueName: q }] });
    await queue.drain();
    expect(await queue.getJobState(first.job.id as string)).toBe('delayed');
    const second = await env.flows().add({ name: 'p', queueName: q, opts: { delay: 60_000 }, children: [{ name: 'c', queueName: q }] });
    await queue.drain(true);
    expect(await queue.getJobState(second.job.id as string)).toBe('unknown');
    expect(await queue.count()).toBe(0);
  });

  it('clean of waiting jobs removes the parent it releases; clean of failed ones releases it', async () => {
    const q = env.queueName();
    const queue = env.queue(q);
    const tree = await env.flows().add({
      name: 'p',
      queueName: q,
      children: [
        { name: 'c', queueName: q },
        { name: 'c', queueName: q },
      ],
    });
    const removed = await queue.clean(0, 0, 'wait');
    expect(removed).toHaveLength(3);
    expect(removed).toContain(tree.job.id);
    expect(await queue.count()).toBe(0);

    const failing = await env
      .flows()
      .add({ name: 'p', queueName: q, children: [{ name: 'c', queueName: q, opts: { removeOnFail: false } }] });
    const worker = env.worker(q, null);
    const child = (await worker.getNextJob('t'))!;
    await child.moveToFailed(new Error('boom'), 't', false);
    expect(await queue.getJobState(failing.job.id as string)).toBe('waiting-children');
    expect(await queue.clean(0, 0, 'failed')).toEqual([child.id]);
    expect(await queue.getJobState(failing.job.id as string)).toBe('waiting');
  });
});
