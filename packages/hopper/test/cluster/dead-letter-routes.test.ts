/**
 * Redis Cluster: a dead-letter queue in another slot is refused on every path that stores job
 * options (issue 12, defect 11), before anything is written; and a job whose stored options still
 * name one (written by another client) fails for good where it is, without failing the script:
 * the worker goes on processing.
 */
import { describe, expect, it } from 'vitest';
import { CrossSlotError, FlowProducer, Queue, QueueEvents, Worker, type Job } from '../../src/index.js';
import { cluster, track, uniqueName } from '../helpers/cluster.js';
import { collect, once } from '../helpers/wait.js';

describe('Redis Cluster: dead-letter routes', () => {
  it('refuses a cross-slot dead-letter queue in add, addBulk, FlowProducer and scheduler templates', async () => {
    const connection = cluster();
    const name = uniqueName();
    const dlq = uniqueName();
    const queue = track(new Queue(name, { connection }));
    await expect(queue.addBulk([{ name: 'a', data: {}, opts: { deadLetter: { queue: dlq } } }])).rejects.toBeInstanceOf(CrossSlotError);
    const flows = track(new FlowProducer({ connection }));
    const flow = { name: 'p', queueName: name, children: [{ name: 'c', queueName: name, opts: { deadLetter: { queue: dlq } } }] };
    await expect(flows.add(flow)).rejects.toBeInstanceOf(CrossSlotError);
    await expect(flows.addBulk([flow])).rejects.toBeInstanceOf(CrossSlotError);
    await expect(
      queue.upsertJobScheduler('s', { every: 60_000 }, { name: 't', opts: { deadLetter: { queue: dlq } } }),
    ).rejects.toBeInstanceOf(CrossSlotError);
    expect(await queue.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0, 'waiting-children': 0 });
    expect(await queue.getJobSchedulers()).toEqual([]);
  });

  it('fails a job whose stored options name an unreachable dead-letter queue, and keeps processing', async () => {
    const connection = cluster();
    const name = uniqueName();
    const queue = track(new Queue(name, { connection }));
    const bad = await queue.add('bad', {}, { jobId: 'bad-1' });
    // Another client rewrote the options to name a queue on another node (a queue in another
    // slot of the same node would be reachable, though not safely: the add paths refuse both).
    const nodeOf = async (key: string) => connection.slots[Number(await connection.cluster('KEYSLOT', key))]?.[0];
    let dlq = uniqueName();
    while ((await nodeOf(`hopper:{${dlq}}:x`)) === (await nodeOf(`hopper:{${name}}:x`))) dlq = uniqueName();
    await connection.hset(`hopper:{${name}}:j:bad-1`, 'o', JSON.stringify({ deadLetter: { queue: dlq } }));
    const events = track(new QueueEvents(name, { connection }));
    await events.waitUntilReady();
    const refused = once<[{ jobId: string; deadLetterQueue: string }]>(events, 'dead-letter-failed');
    const worker = track(
      new Worker(
        name,
        async (job: Job) => {
          if (job.name === 'bad') throw new Error('boom');
          return 'ok';
        },
        { connection },
      ),
    );
    const [failed] = await once<[Job]>(worker, 'failed');
    expect(failed.id).toBe(bad.id);
    const [event] = await refused;
    expect(event.jobId).toBe('bad-1');
    expect(await queue.getJobState('bad-1')).toBe('failed');
    await queue.addBulk([1, 2, 3].map((i) => ({ name: 'good', data: { i } })));
    expect(await collect(worker, 'completed', 3)).toHaveLength(3);
  });
});
