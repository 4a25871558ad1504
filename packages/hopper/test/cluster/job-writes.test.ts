/**
 * Redis Cluster: the writes a processor makes on its job (durable steps, updateData, log,
 * progress) are routed to the node that owns the job's slot. Each script declares the job's keys,
 * so ioredis sends it there; a script without keys would go to a random node and fail there (or
 * a failed step record would make its side effect run again).
 */
import { describe, expect, it } from 'vitest';
import { Queue, Worker, type Job } from '../../src/index.js';
import { cluster, track, uniqueName } from '../helpers/cluster.js';
import { collect } from '../helpers/wait.js';

describe('Redis Cluster: job writes', () => {
  it('stores steps, data, logs and progress of jobs on queues in different slots', async () => {
    const connection = cluster();
    for (const name of [uniqueName(), uniqueName(), uniqueName()]) {
      const queue = track(new Queue(name, { connection }));
      await queue.addBulk(Array.from({ length: 6 }, (_, i) => ({ name: 'w', data: { i } })));
      let sideEffects = 0;
      const worker = track(
        new Worker<{ i: number; updated?: boolean }>(
          name,
          async (job) => {
            const value = await job.step('effect', () => {
              sideEffects++;
              return job.data.i * 10;
            });
            await job.updateData({ i: job.data.i, updated: true });
            await job.log(`line ${job.data.i}`);
            await job.updateProgress(50);
            return value;
          },
          { connection, concurrency: 3 },
        ),
      );
      const done = await collect<[Job, number]>(worker, 'completed', 6);
      expect(done.map(([, v]) => v).sort((a, b) => a - b)).toEqual([0, 10, 20, 30, 40, 50]);
      expect(sideEffects).toBe(6);
      for (const [job] of done) {
        const stored = await queue.getJob(job.id as string);
        expect(stored?.data).toEqual({ i: (job.data as { i: number }).i, updated: true });
        expect(stored?.progress).toBe(50);
        expect((await stored?.getSteps())?.map((s) => s.key)).toEqual(['effect']);
        expect((await queue.getJobLogs(job.id as string)).logs).toEqual([`line ${(job.data as { i: number }).i}`]);
      }
    }
  });

  it('writes data and logs of a job fetched with getJob (unfenced) on its node', async () => {
    const connection = cluster();
    const queue = track(new Queue(uniqueName(), { connection }));
    const added = await queue.add('x', { v: 1 });
    const job = (await queue.getJob(added.id as string)) as Job;
    await job.updateData({ v: 2 });
    await job.log('from outside');
    expect((await queue.getJob(added.id as string))?.data).toEqual({ v: 2 });
    expect((await queue.getJobLogs(added.id as string)).logs).toEqual(['from outside']);
  });
});
