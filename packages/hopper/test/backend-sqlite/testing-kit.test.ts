/**
 * hopper/testing: the test kit users get (an in-memory SQLite queue on a fake clock). No Redis:
 * this file runs in the engine-sqlite project only.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, type Job } from '../../src/index.js';
import { createTestQueue } from '../../src/testing/index.js';

describe('hopper-queue/testing', () => {
  it('runs a job delayed by an hour at once when the clock is advanced', async () => {
    const t = await createTestQueue<{ to: string }, string>('emails', { processor: async (job) => `sent to ${job.data.to}` });
    try {
      const started = performance.now();
      const job = await t.queue.add('welcome', { to: 'ada' }, { delay: 3_600_000 });
      await t.runUntilIdle();
      expect(await job.getState()).toBe('delayed');
      await t.advance(3_600_000);
      expect(await job.getState()).toBe('completed');
      expect((await t.queue.getJob(job.id as string))?.returnvalue).toBe('sent to ada');
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await t.close();
    }
  });

  it('runs every retry of an exponential backoff within one advance, on the fake clock', async () => {
    const runs: number[] = [];
    const t = await createTestQueue('payments', {
      now: new Date('2026-03-29T00:30:00Z'),
      processor: async () => {
        runs.push(t.clock.now());
        if (runs.length < 3) throw new Error('gateway 502');
        return 'paid';
      },
    });
    try {
      const job = await t.queue.add('charge', {}, { attempts: 3, backoff: { type: 'exponential', delay: 1000 } });
      await t.advance(10_000);
      const done = (await t.queue.getJob(job.id as string)) as Job;
      expect(await done.getState()).toBe('completed');
      expect(done.attemptsMade).toBe(3);
      // 1 s, then 2 s of backoff, as the clock tells.
      expect(runs.map((r) => r - runs[0])).toEqual([0, 1000, 3000]);
    } finally {
      await t.close();
    }
  });

  it('without a processor: the producer side, and runUntilIdle says what is left', async () => {
    const t = await createTestQueue('reports');
    try {
      await t.queue.add('daily', {}, { priority: 2 });
      await t.advance(1000);
      expect(await t.queue.getJobCounts('prioritized')).toEqual({ prioritized: 1 });
      await expect(t.runUntilIdle({ timeoutMs: 50 })).rejects.toThrow(/prioritized.*no processor/);
      // Two test queues of the same name do not see each other.
      const other = await createTestQueue('reports');
      expect(await other.queue.count()).toBe(0);
      await other.close();
    } finally {
      await t.close();
    }
  });

  it('runUntilIdle waits for a processor that awaits real I/O, and for the jobs it adds', async () => {
    let release: () => void = () => undefined;
    const io = new Promise<void>((resolve) => (release = resolve));
    const t = await createTestQueue<{ step: number }>('chain', {
      processor: async (job) => {
        if (job.data.step === 1) await io;
        if (job.data.step < 3) await t.queue.add('next', { step: job.data.step + 1 });
        return job.data.step;
      },
    });
    try {
      const active = new Promise((resolve) => t.worker?.once('active', resolve));
      await t.queue.add('first', { step: 1 });
      await active;
      const idle = t.runUntilIdle();
      release();
      await idle;
      expect(await t.queue.getJobCounts('completed', 'waiting', 'active')).toEqual({ completed: 3, waiting: 0, active: 0 });
    } finally {
      await t.close();
    }
  });

  it('runUntilIdle runs a job the fake clock made due, with a processor', async () => {
    const t = await createTestQueue('due', { processor: async () => 'done' });
    try {
      const job = await t.queue.add('later', {}, { delay: 60_000 });
      t.clock.set(t.clock.now() + 60_000);
      await t.runUntilIdle();
      expect(await job.getState()).toBe('completed');
    } finally {
      await t.close();
    }
  });

  it('refuses a clock start or an advance that is not a number', async () => {
    await expect(createTestQueue('x', { now: Number.NaN })).rejects.toBeInstanceOf(InvalidOptionsError);
    const t = await createTestQueue('x');
    await expect(t.advance(-1)).rejects.toBeInstanceOf(InvalidOptionsError);
    await t.close();
  });

  it('runs a cron schedule across a DST night (Europe/Paris spring forward) within one advance', async () => {
    const ran: string[] = [];
    const t = await createTestQueue('reports', {
      now: new Date('2026-03-27T12:00:00Z'),
      processor: async (job) => {
        ran.push(new Date(t.clock.now()).toISOString());
        return job.name;
      },
    });
    try {
      // 02:30 Paris time every night: on 29 March 02:30 does not exist (02:00 -> 03:00), and
      // the run happens at 03:00 local (01:00Z), as Vixie cron does.
      await t.queue.upsertJobScheduler('nightly', { pattern: '30 2 * * *', tz: 'Europe/Paris' }, { name: 'report' });
      await t.advance(3 * 24 * 3_600_000);
      expect(ran).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
      expect(await t.queue.getJobSchedulerState('nightly')).toMatchObject({
        fired: 3,
        missed: 0,
        next: Date.parse('2026-03-31T00:30:00Z'),
      });
    } finally {
      await t.close();
    }
  });
});
