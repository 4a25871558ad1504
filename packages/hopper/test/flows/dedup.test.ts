import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, JobNotFoundError } from '../../src/index.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper();

describe('flows: deduplication', () => {
  it('a flow of one job deduplicates as queue.add does', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const flows = env.flows();
    const opts = { deduplication: { id: 'solo' }, delay: 60_000 };
    const first = await flows.add({ name: 'root', queueName: name, data: { order: 1 }, opts });
    const second = await flows.add({ name: 'root', queueName: name, data: { order: 2 }, opts });
    expect(second.job.id).toBe(first.job.id);
    expect(second.job.data).toEqual({ order: 1 });
    expect(await queue.getDeduplicationJobId('solo')).toBe(first.job.id);
    const [a, b] = await flows.addBulk([
      { name: 'one', queueName: name, opts: { deduplication: { id: 'bulk' } } },
      { name: 'two', queueName: name, opts: { deduplication: { id: 'bulk' } } },
    ]);
    expect(b.job.id).toBe(a.job.id);
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 1, delayed: 1 });
  });

  it('refuses deduplication on a node with children, and on a child, before writing', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const flows = env.flows();
    const child = { name: 'child', queueName: name };
    await expect(flows.add({ name: 'root', queueName: name, opts: { deduplication: { id: 'r' } }, children: [child] })).rejects.toThrow(
      'Deduplication options cannot be used on flow nodes with children',
    );
    await expect(
      flows.add({
        name: 'root',
        queueName: name,
        children: [{ name: 'mid', queueName: name, opts: { deduplication: { id: 'm' } }, children: [child] }],
      }),
    ).rejects.toThrow('Deduplication options cannot be used on flow nodes with children');
    await expect(
      flows.add({ name: 'root', queueName: name, children: [{ ...child, opts: { deduplication: { id: 'c' } } }] }),
    ).rejects.toBeInstanceOf(InvalidOptionsError);
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 0, 'waiting-children': 0 });
  });

  it('addBulk mixing a deduplicated job and a refused flow writes nothing', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const flows = env.flows();
    await expect(
      flows.addBulk([
        { name: 'ok', queueName: name, opts: { deduplication: { id: 'v' } } },
        { name: 'orphan', queueName: name, opts: { parent: { id: 'missing', queue: `${env.prefix}:${name}` } } },
      ]),
    ).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await queue.getDeduplicationJobId('v')).toBeUndefined();
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });
});
