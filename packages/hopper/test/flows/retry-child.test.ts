import { describe, expect, it } from 'vitest';
import type { JobsOptions } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

/** A parent with one child `c` (options `opts`) and one other child, both in `childQ`. */
async function parentWithChild(opts: JobsOptions) {
  const parentQ = env.queueName('p');
  const childQ = env.queueName('c');
  const flows = env.flows();
  const tree = await flows.add({
    name: 'parent',
    queueName: parentQ,
    children: [
      { name: 'c', queueName: childQ, opts: { ...opts, jobId: 'c' } },
      { name: 'other', queueName: childQ, opts: { jobId: 'other' } },
    ],
  });
  return { parent: tree.job, parents: env.queue(parentQ), children: env.queue(childQ), worker: env.worker(childQ, null) };
}

describe('flows: retrying a finished child makes it pending for its parent again', () => {
  for (const policy of ['ignoreDependencyOnFailure', 'continueParentOnFailure', 'none'] as const) {
    it(`a failed child (${policy})`, async () => {
      const { parent, children, worker } = await parentWithChild(policy === 'none' ? {} : { [policy]: true });
      const job = await worker.getNextJob('t');
      expect(job?.id).toBe('c');
      await job!.moveToFailed(new Error('boom'), 't', false);
      const before = await parent.getDependenciesCount();
      expect(before.failed).toBe(1);
      expect(before.unprocessed).toBe(policy === 'none' ? 2 : 1);
      await (await children.getJob('c'))!.retry('failed');
      expect(await parent.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 2, failed: 0 });
    });
  }

  it('a cancelled child its parent ignored', async () => {
    const { parent, parents, children } = await parentWithChild({ ignoreDependencyOnFailure: true });
    await children.cancelJob('c', 'stop');
    expect(await parent.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 1, failed: 1 });
    await (await children.getJob('c'))!.retry('failed');
    expect(await parent.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 2, failed: 0 });
    expect(await parents.getJobState(parent.id as string)).toBe('waiting-children');
  });

  it('a completed child: its result is dropped until it completes again', async () => {
    const { parent, parents, children, worker } = await parentWithChild({});
    const first = await worker.getNextJob('t');
    await first!.moveToCompleted('r1', 't', false);
    expect(await parent.getDependenciesCount()).toEqual({ processed: 1, unprocessed: 1, failed: 0 });
    await (await children.getJob(first!.id as string))!.retry('completed');
    expect(await parent.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 2, failed: 0 });
    // Both run; the parent moves on only after the retried child completed again.
    for (let i = 0; i < 2; i++) {
      const next = await worker.getNextJob('t');
      expect(await parents.getJobState(parent.id as string)).toBe('waiting-children');
      await next!.moveToCompleted(`r-${next!.id}`, 't', false);
    }
    expect(await parents.getJobState(parent.id as string)).toBe('waiting');
    expect(await parent.getChildrenValues()).toEqual({
      [`${env.prefix}:${children.name}:c`]: 'r-c',
      [`${env.prefix}:${children.name}:other`]: 'r-other',
    });
  });
});
