import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('flows: a failed child deleted by retention no longer blocks its parent', () => {
  it('removeOnFail: true on the last pending child (as in BullMQ)', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const parents = env.queue(parentQ);
    const worker = env.worker(childQ, null);
    const tree = await env.flows().add({
      name: 'parent',
      queueName: parentQ,
      children: [
        { name: 'bad', queueName: childQ, opts: { removeOnFail: true, jobId: 'bad' } },
        { name: 'good', queueName: childQ, opts: { jobId: 'good' } },
      ],
    });
    const parentId = tree.job.id as string;
    // The good child completes first, so the failing one is the last pending child.
    const first = await worker.getNextJob('t');
    const second = await worker.getNextJob('t');
    const [bad, good] = first?.id === 'bad' ? [first, second] : [second, first];
    await good!.moveToCompleted('ok', 't', false);
    expect(await parents.getJobState(parentId)).toBe('waiting-children');
    await bad!.moveToFailed(new Error('boom'), 't', false);
    expect(await env.queue(childQ).getJob('bad')).toBeUndefined();
    expect(await parents.getJobState(parentId)).toBe('waiting');
    expect(await tree.job.getDependenciesCount()).toEqual({ processed: 1, unprocessed: 0, failed: 0, ignored: 0 });
  });

  it('a kept failed child trimmed away later by removeOnFail: { count }', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const parents = env.queue(parentQ);
    const children = env.queue(childQ);
    const worker = env.worker(childQ, null);
    const tree = await env.flows().add({
      name: 'parent',
      queueName: parentQ,
      children: [{ name: 'bad', queueName: childQ, opts: { removeOnFail: { count: 1 }, jobId: 'bad' } }],
    });
    const parentId = tree.job.id as string;
    const bad = await worker.getNextJob('t');
    await bad!.moveToFailed(new Error('boom'), 't', false);
    // Kept: the parent waits for its retry.
    expect(await parents.getJobState(parentId)).toBe('waiting-children');
    await children.add('other', {}, { removeOnFail: { count: 1 }, jobId: 'other' });
    const other = await worker.getNextJob('t');
    await other!.moveToFailed(new Error('boom'), 't', false);
    expect(await children.getJob('bad')).toBeUndefined();
    expect(await parents.getJobState(parentId)).toBe('waiting');
  });

  it('a parent still waits for a failed child that is kept', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const parents = env.queue(parentQ);
    const worker = env.worker(childQ, null);
    const tree = await env.flows().add({ name: 'parent', queueName: parentQ, children: [{ name: 'bad', queueName: childQ }] });
    const bad = await worker.getNextJob('t');
    await bad!.moveToFailed(new Error('boom'), 't', false);
    expect(await parents.getJobState(tree.job.id as string)).toBe('waiting-children');
    expect(await tree.job.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 1, failed: 1, ignored: 0 });
  });
});
