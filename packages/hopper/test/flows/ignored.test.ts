import { describe, expect, it } from 'vitest';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('flows: children a parent let go of (BullMQ "ignored")', () => {
  it('are listed apart from the failures it still accounts for', async () => {
    const parentQ = env.queueName('p');
    const childQ = env.queueName('c');
    const worker = env.worker(childQ, null);
    const tree = await env.flows().add({
      name: 'parent',
      queueName: parentQ,
      children: [
        { name: 'i', queueName: childQ, opts: { jobId: 'i', ignoreDependencyOnFailure: true } },
        { name: 'c', queueName: childQ, opts: { jobId: 'c', continueParentOnFailure: true } },
        { name: 'w', queueName: childQ, opts: { jobId: 'w' } },
        { name: 'r', queueName: childQ, opts: { jobId: 'r', removeDependencyOnFailure: true } },
      ],
    });
    for (let i = 0; i < 4; i++) {
      const job = await worker.getNextJob('t');
      await job!.moveToFailed(new Error(`${job!.id} broke`), 't', false);
    }
    const key = (id: string) => `${env.prefix}:${childQ}:${id}`;
    const parent = tree.job;
    expect(await parent.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 1, failed: 1, ignored: 2 });
    expect(await parent.getDependenciesCount({ ignored: true })).toEqual({ ignored: 2 });
    expect(await parent.getIgnoredChildrenFailures()).toEqual({ [key('i')]: 'i broke', [key('c')]: 'c broke' });
    // Every recorded failure, whatever the option (as before).
    expect(await parent.getFailedChildrenValues()).toEqual({ [key('i')]: 'i broke', [key('c')]: 'c broke', [key('w')]: 'w broke' });
    const all = await parent.getDependencies();
    expect(all.failed).toEqual([key('w')]);
    expect(all.ignored).toEqual({ [key('i')]: 'i broke', [key('c')]: 'c broke' });
    const page = await parent.getDependencies({ ignored: {} });
    expect(page).toEqual({ ignored: { [key('i')]: 'i broke', [key('c')]: 'c broke' }, nextIgnoredCursor: 0 });
    // getFlow follows them too.
    const flow = await env.flows().getFlow({ queueName: parentQ, id: parent.id as string });
    expect(flow!.children!.map((c) => c.job.id).sort()).toEqual(['c', 'i', 'w']);
  });
});
