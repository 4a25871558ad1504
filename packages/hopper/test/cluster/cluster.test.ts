/**
 * Redis Cluster smoke tests: a queue's keys share one hash tag, so every script runs in one
 * slot. Add, process, retry and stall rescue work against a real 3-master cluster, with queues
 * spread over different slots, and with BullMQ's `{tag}` prefix convention.
 */
import { describe, expect, it } from 'vitest';
import { CrossSlotError, FlowProducer, Queue, Worker, type Job } from '../../src/index.js';
import { cluster, track, uniqueName } from '../helpers/cluster.js';
import { collect, once } from '../helpers/wait.js';

describe('Redis Cluster', () => {
  it('adds and processes jobs on queues in different slots', async () => {
    const connection = cluster();
    const names = [uniqueName(), uniqueName(), uniqueName(), uniqueName()];
    for (const name of names) {
      const queue = track(new Queue(name, { connection }));
      await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'n', data: { i } })));
      const worker = track(new Worker(name, async (job: Job<{ i: number }>) => job.data.i * 2, { connection, concurrency: 5 }));
      const done = await collect<[Job, number]>(worker, 'completed', 20);
      expect(done.map(([, v]) => v).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
      expect(await queue.getJobCounts('waiting', 'active')).toEqual({ waiting: 0, active: 0 });
    }
  });

  it('wakes an idle worker for a job added later (its idle wait, then its claim, on a cluster client)', async () => {
    const connection = cluster();
    const name = uniqueName();
    const queue = track(new Queue(name, { connection }));
    const worker = track(new Worker(name, async (job: Job<{ i: number }>) => job.data.i + 1, { connection }));
    await once(worker, 'drained');
    const completed = once<[Job, number]>(worker, 'completed');
    await queue.add('late', { i: 41 });
    const [, value] = await completed;
    expect(value).toBe(42);
  });

  it('retries with backoff and fails for good', async () => {
    const connection = cluster();
    const name = uniqueName();
    const queue = track(new Queue(name, { connection, prefix: 'hop' }));
    const ok = await queue.add('flaky', {}, { attempts: 3, backoff: 20, removeOnComplete: false });
    const bad = await queue.add('bad', {}, { attempts: 2, backoff: 20 });
    let flakyRuns = 0;
    const worker = track(
      new Worker(
        name,
        async (job) => {
          if (job.name === 'bad') throw new Error('always');
          if (++flakyRuns < 3) throw new Error('not yet');
          return 'ok';
        },
        { connection, prefix: 'hop', autorun: false },
      ),
    );
    const finished = Promise.all([
      once(worker, 'completed'),
      once(worker, 'failed', (job: Job) => job.id === bad.id && job.attemptsMade === 2),
    ]);
    void worker.run();
    await finished;
    expect((await queue.getJob(ok.id as string))?.returnvalue).toBe('ok');
    expect(await (await queue.getJob(bad.id as string))?.getState()).toBe('failed');
  });

  it('dead-letters across queues only under one hash tag, and says so otherwise', async () => {
    const connection = cluster();
    const name = uniqueName();
    const dlqName = uniqueName();
    const untagged = track(new Queue(name, { connection }));
    await expect(untagged.add('x', {}, { deadLetter: { queue: dlqName } })).rejects.toBeInstanceOf(CrossSlotError);
    await expect(untagged.add('x', {}, { deadLetter: { queue: dlqName } })).rejects.toThrow(/hash tag/);
    const queue = track(new Queue(name, { connection, prefix: '{dl}', deadLetter: { queue: dlqName } }));
    const dlq = track(new Queue(dlqName, { connection, prefix: '{dl}' }));
    await queue.add('doomed', { v: 1 }, { jobId: 'doomed-1' });
    const worker = track(
      new Worker(
        name,
        async () => {
          throw new Error('no');
        },
        { connection, prefix: '{dl}' },
      ),
    );
    await once(worker, 'failed');
    expect((await dlq.getWaiting()).map((j) => j.id)).toEqual([`${name}:doomed-1:1`]);
  });

  it('adds cross-queue flows only under one hash tag, and says so otherwise', async () => {
    const connection = cluster();
    const parentQ = uniqueName();
    const childQ = uniqueName();
    const untagged = track(new FlowProducer({ connection }));
    const flow = { name: 'p', queueName: parentQ, children: [{ name: 'c', queueName: childQ, data: { n: 4 } }] };
    await expect(untagged.add(flow)).rejects.toBeInstanceOf(CrossSlotError);
    await expect(untagged.add(flow)).rejects.toThrow(/hash tag/);
    const parent = await track(new Queue(parentQ, { connection })).add('p', {});
    const childQueue = track(new Queue(childQ, { connection }));
    await expect(childQueue.add('c', {}, { parent: { id: parent.id as string, queue: `hopper:${parentQ}` } })).rejects.toBeInstanceOf(
      CrossSlotError,
    );

    const flows = track(new FlowProducer({ connection, prefix: '{flows}' }));
    const node = await flows.add(flow);
    const childWorker = track(new Worker<{ n: number }>(childQ, async (job) => job.data.n * 2, { connection, prefix: '{flows}' }));
    const parentWorker = track(
      new Worker(parentQ, async (job) => Object.values(await job.getChildrenValues<number>()), { connection, prefix: '{flows}' }),
    );
    const [done] = await once<[Job]>(parentWorker, 'completed');
    expect(done.id).toBe(node.job.id);
    expect(done.returnvalue).toEqual([8]);
    await childWorker.close();
  });

  it('rescues a stalled job', async () => {
    const connection = cluster();
    const name = uniqueName();
    const queue = track(new Queue(name, { connection, prefix: '{app}' }));
    const job = await queue.add('stuck', {});
    let runs = 0;
    // A worker that dies holding the job: it takes it by hand and never renews its lock.
    const first = track(new Worker(name, null, { connection, prefix: '{app}', lockDuration: 300, skipStalledCheck: true }));
    expect((await first.getNextJob('dead-worker'))?.id).toBe(job.id);
    runs++;
    const second = track(
      new Worker(
        name,
        async () => {
          runs++;
          return 'rescued';
        },
        { connection, prefix: '{app}', stalledInterval: 100 },
      ),
    );
    await once(second, 'completed');
    expect(runs).toBe(2);
    expect((await queue.getJob(job.id as string))?.stalledCounter).toBe(1);
  });
});
