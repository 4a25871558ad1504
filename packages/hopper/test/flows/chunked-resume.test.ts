/**
 * Resuming a flow added in chunks (issue 12: "confirm or rule out"): a FlowProducer.add of a tree
 * larger than one call (1,000 nodes) writes the parent unsealed, then its children chunk by chunk,
 * then seals it. When the add is cut short and run again, the parent (a custom jobId) is found
 * unsealed and the children are added again: a child without an id of its own must not be added
 * twice. (It was: the 1,000 children of the first chunk were added again under new ids. Now
 * a chunked tree whose root has a jobId gives each child without one the id `<parent id>.<index>`.)
 */
import { describe, expect, it } from 'vitest';
import { GroupMaxSizeExceededError } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('flows: resuming a chunked add', () => {
  it('adds each child once when an add cut short is run again (children without ids)', async () => {
    const parentQ = env.queueName();
    const childQ = env.queueName();
    const children = env.queue(childQ);
    const flows = env.flows();
    // A child of the second chunk would take a full group past its cap: that call is refused,
    // after the first chunk was written.
    await children.add('blocker', {}, { jobId: 'taken', group: { id: 'g', maxSize: 1 } });
    const flow = {
      name: 'root',
      queueName: parentQ,
      opts: { jobId: 'root' },
      children: [
        ...Array.from({ length: 1000 }, (_, i) => ({ name: 'c', queueName: childQ, data: { i } })),
        { name: 'c', queueName: childQ, data: { i: 1000 }, opts: { group: { id: 'g', maxSize: 1 } } },
        ...Array.from({ length: 499 }, (_, i) => ({ name: 'c', queueName: childQ, data: { i: 1001 + i } })),
      ],
    };
    await expect(flows.add(flow)).rejects.toBeInstanceOf(GroupMaxSizeExceededError);
    await children.remove('taken');
    await flows.add(flow);
    const parent = (await env.queue(parentQ).getJob('root'))!;
    expect(await parent.getDependenciesCount({ unprocessed: true })).toEqual({ unprocessed: 1500 });
    expect(await children.count()).toBe(1500);
    // The children's ids come from the parent's and their place, so the second run found them.
    expect((await children.getJob('root.0'))?.data).toEqual({ i: 0 });
    expect((await children.getJob('root.1499'))?.data).toEqual({ i: 1499 });
  });
});
