/**
 * A claim's reply leaves out a row's name and opts when they equal the previous row's, and sends
 * the timestamp as an integer (includes/claim.lua, replies.ts parseClaim): every claimed job must
 * still come back with its own name, opts and timestamp, whatever its neighbours in the reply
 * carry, a job stored without opts included ('' is sent for it, so it never takes its
 * neighbour's).
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createBackend } from '../../src/backend/create.js';
import { queueKeys } from '../../src/backend/redis/keys.js';
import { useHopper } from '../helpers/hopper.js';

const env = useHopper({ fakeClock: true });

describe('claim rows', () => {
  it('give every job its own name, opts and timestamp when neighbours share or differ', async () => {
    const name = env.queueName();
    const queue = env.queue(name);
    const added = [
      { name: 'a', opts: { jobId: 'j1', attempts: 2 } },
      { name: 'a', opts: { jobId: 'j2', attempts: 2 } },
      { name: 'b', opts: { jobId: 'j3', attempts: 2 } },
      { name: 'b', opts: { jobId: 'j4', attempts: 3 } },
      { name: 'b', opts: { jobId: 'j5', attempts: 3 } },
      { name: 'a', opts: { jobId: 'j6', attempts: 3 } },
      { name: 'a', opts: { jobId: 'j7', attempts: 3 } },
    ];
    for (const job of added) {
      await queue.add(job.name, { id: job.opts.jobId }, job.opts);
      env.clock!.advance(1);
    }
    // j7 and j6 as a job written without opts (by another writer): read back as none, not j5's.
    const client = new Redis(env.url);
    try {
      const base = queueKeys(env.prefix, name).base;
      await client.hdel(`${base}j:j6`, 'o');
      await client.hdel(`${base}j:j7`, 'o');
    } finally {
      client.disconnect();
    }
    const backend = env.track(createBackend({ connection: env.url, prefix: env.prefix, queueName: name, role: 'command' }));
    const expected = await Promise.all(added.map(async (job) => backend.getJob(job.opts.jobId)));
    const { jobs } = await backend.claim({ count: 10, lockMs: 30_000, tokenPrefix: 'w:1:' }, env.clock!.backendNow());
    expect(jobs.map((job) => job.id)).toEqual(['j1', 'j2', 'j3', 'j4', 'j5', 'j6', 'j7']);
    for (const [i, job] of jobs.entries()) {
      const record = expected[i]!;
      expect({ id: job.id, name: job.name, opts: job.opts, timestamp: job.timestamp, data: job.data }).toEqual({
        id: record.id,
        name: record.name,
        opts: record.opts ?? '',
        timestamp: record.timestamp,
        data: record.data,
      });
      expect(typeof job.timestamp).toBe('number');
    }
    expect(jobs[5].opts).toBe('');
    expect(jobs[6].opts).toBe('');
    expect(JSON.parse(jobs[4].opts)).toMatchObject({ attempts: 3 });
    expect(new Set(jobs.map((job) => job.timestamp)).size).toBe(7);
  });
});
