/**
 * The way there and back: a BullMQ 6 deployment moved to Hopper (migrateFromBullMQ), then back to
 * BullMQ (migrateToBullMQ), holds the same jobs (ids, names, data, options, states, attempts,
 * failures, due times) and schedulers; real BullMQ workers then run every job exactly once.
 */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import { migrateFromBullMQ, migrateToBullMQ, isComplete } from '../../src/migrate/index.js';
import { Queue } from '../../src/index.js';
import { loadBull, useBullPrefixes } from './bullmq-deployment.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

interface JobView {
  id?: string;
  name: string;
  data: unknown;
  opts: Record<string, unknown>;
  attemptsMade: number;
  failedReason?: string;
  priority: number;
  getState(): Promise<string>;
  retry(): Promise<void>;
  promote(): Promise<void>;
}

/** What a BullMQ job is, for comparing before and after. */
async function snapshot(r: Redis, bq: { getJob(id: string): Promise<JobView | undefined> }, prefix: string, name: string) {
  const ids = new Set<string>();
  for (const key of ['wait', 'paused']) for (const id of await r.lrange(`${prefix}:${name}:${key}`, 0, -1)) ids.add(id);
  for (const key of ['prioritized', 'delayed', 'failed', 'completed'])
    for (const id of await r.zrange(`${prefix}:${name}:${key}`, 0, -1)) ids.add(id);
  const out: Record<string, unknown> = {};
  for (const id of [...ids].sort()) {
    const job = (await bq.getJob(id))!;
    const due = await r.zscore(`${prefix}:${name}:delayed`, id);
    const { attempts, backoff, priority } = job.opts;
    out[id] = {
      name: job.name,
      data: job.data,
      opts: { attempts, backoff, priority },
      state: await job.getState(),
      attemptsMade: job.attemptsMade,
      failedReason: job.failedReason,
      due: due === null ? undefined : Math.floor(Number(due) / 4096),
    };
  }
  return { out, wait: (await r.lrange(`${prefix}:${name}:wait`, 0, -1)).reverse() };
}

describe('round trip', () => {
  it('BullMQ -> Hopper -> BullMQ gives the same jobs and schedulers; BullMQ workers run each once', async () => {
    const bull = await loadBull(6);
    const bp = newBullPrefix();
    const name = env.queueName('trip');
    const conn = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new bull.Queue(name, { connection: conn, prefix: bp }) as unknown as {
      add(n: string, d: unknown, o?: Record<string, unknown>): Promise<unknown>;
      getJob(id: string): Promise<JobView | undefined>;
      upsertJobScheduler(id: string, r: Record<string, unknown>, t?: Record<string, unknown>): Promise<unknown>;
      getJobScheduler(id: string): Promise<Record<string, unknown> | undefined>;
      close(): Promise<void>;
    };
    try {
      await bq.add('will-fail', { f: 1 }, { jobId: 'f1', attempts: 1 });
      const w = new bull.Worker(name, null, { connection: conn, prefix: bp, autorun: false });
      const job = await w.getNextJob('tok');
      await job!.moveToFailed(new Error('boom f1'), 'tok', false);
      await w.close();
      for (let i = 0; i < 20; i++) await bq.add('plain', { i }, { jobId: `w${i}`, attempts: 3, backoff: { type: 'fixed', delay: 10 } });
      for (let i = 0; i < 5; i++) await bq.add('urgent', { i }, { jobId: `p${i}`, priority: 1 + (i % 2) });
      for (let i = 0; i < 5; i++) await bq.add('later', { i }, { jobId: `d${i}`, delay: 3_600_000 + i * 1000 });
      await bq.upsertJobScheduler('nightly', { pattern: '0 3 * * *', tz: 'Europe/Paris' }, { name: 'nightly', data: { n: 1 } });
      const before = await snapshot(conn, bq, bp, name);
      const schedBefore = await bq.getJobScheduler('nightly');

      const there = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
      expect(isComplete(there)).toBe(true);
      // In Hopper, the scheduler's pending run is Hopper's own for the same instant (sched:<id>:<instant>).
      const hopper = new Queue(name, { connection: env.url, prefix: env.prefix });
      try {
        const pending = `sched:nightly:${String(schedBefore!.next)}`;
        expect(await hopper.getJobState(pending)).toBe('delayed');
        expect((await hopper.getJobs(['delayed'])).map((j) => j.id)).toContain(pending);
      } finally {
        await hopper.close();
      }
      const back = await migrateToBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
      expect(isComplete(back)).toBe(true);
      expect(back.lost).toBe(0);
      expect(back.schedulers).toBe(1);

      const after = await snapshot(conn, bq, bp, name);
      expect(after.wait).toEqual(before.wait);
      // The scheduler's planned occurrence is the same job id, due at the same instant.
      expect(after.out).toEqual(before.out);
      const schedAfter = await bq.getJobScheduler('nightly');
      expect(schedAfter).toMatchObject({
        key: 'nightly',
        pattern: '0 3 * * *',
        tz: 'Europe/Paris',
        next: schedBefore!.next,
        template: { data: { n: 1 } },
      });

      // Real BullMQ workers run everything once (the failure retried, the delayed ones promoted).
      await (await bq.getJob('f1'))!.retry();
      for (let i = 0; i < 5; i++) await (await bq.getJob(`d${i}`))!.promote();
      const expected = 1 + 20 + 5 + 5;
      const runs = new Map<string, number>();
      let done: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => (done = resolve));
      const worker = new bull.Worker(
        name,
        async (j: { id: string }) => {
          runs.set(j.id, (runs.get(j.id) ?? 0) + 1);
          if ([...runs.values()].reduce((a, b) => a + b, 0) === expected) done();
        },
        { connection: { url: env.url, maxRetriesPerRequest: null }, prefix: bp, concurrency: 4 },
      );
      const errors: unknown[] = [];
      worker.on('error', (e) => errors.push(e));
      await finished;
      await worker.close();
      expect(errors).toEqual([]);
      expect(runs.size).toBe(expected);
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await bq.close();
      conn.disconnect();
    }
  });
});
