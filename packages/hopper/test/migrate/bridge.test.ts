/**
 * Bridge mode (--follow): BullMQ producers keep adding while Hopper workers run; each add moves
 * within about 100 ms (woken by BullMQ's events stream), delayed jobs start at their due time, a
 * second migrate of the same queue is refused, scheduler occurrences run once across the switch.
 */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { useHopper } from '../helpers/hopper.js';
import { migrateFromBullMQ, MigrationError } from '../../src/migrate/index.js';
import { loadBull, useBullPrefixes } from './bullmq-deployment.js';

const env = useHopper();
const newBullPrefix = useBullPrefixes(env);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

describe('bridge', () => {
  it('moves what BullMQ producers add within 100 ms, delayed jobs start on time, a second migrate is refused', async () => {
    const bull = await loadBull(6);
    const bp = newBullPrefix();
    const name = env.queueName('bridge');
    const conn = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new bull.Queue(name, { connection: conn, prefix: bp });
    await bq.add('warm', {}, { jobId: 'warm' });
    const started = new Map<string, number>();
    const runs = new Map<string, number>();
    let expected = 0;
    let resolveAll: () => void = () => undefined;
    const allDone = new Promise<void>((resolve) => (resolveAll = resolve));
    env.worker(
      name,
      async (job) => {
        started.set(job.id!, Date.now());
        runs.set(job.id!, (runs.get(job.id!) ?? 0) + 1);
        if (expected > 0 && runs.size === expected) resolveAll();
      },
      { concurrency: 20 },
    );
    const controller = new AbortController();
    const bridge = migrateFromBullMQ({
      from: env.url,
      queue: name,
      prefix: bp,
      hopperPrefix: env.prefix,
      follow: true,
      signal: controller.signal,
    });
    // The bridge has taken the queue once the warm-up job ran in Hopper.
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (runs.has('warm')) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
    const second = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(MigrationError);
    expect((second as MigrationError).reason).toBe('locked');

    const addedAt = new Map<string, number>();
    const dueAt = new Map<string, number>();
    for (let i = 0; i < 60; i++) {
      const id = `live${i}`;
      addedAt.set(id, Date.now());
      await bq.add('live', { i }, { jobId: id });
      if (i % 10 === 0) {
        const delayed = `late${i}`;
        dueAt.set(delayed, Date.now() + 1500);
        await bq.add('late', { i }, { jobId: delayed, delay: 1500 });
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expected = 1 + addedAt.size + dueAt.size;
    if (runs.size === expected) resolveAll();
    await allDone;
    controller.abort();
    const report = await bridge;
    await bq.close();
    conn.disconnect();
    expect(report.ended).toBe('stopped');
    expect(report.lost).toBe(0);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    // Add to start, and delayed lateness: the figures docs/migrating.md quotes (about 100 ms or
    // less on a quiet machine) are printed; the test asserts only what load cannot break: a
    // delayed job never starts early, and nothing waits for a poll or a timeout (seconds).
    const lags = [...addedAt].map(([id, t]) => started.get(id)! - t);
    const lateness = [...dueAt].map(([id, due]) => started.get(id)! - due);
    console.log(
      `bridge: add to start p50 ${percentile(lags, 50)} ms, p95 ${percentile(lags, 95)} ms; ` +
        `delayed lateness p50 ${percentile(lateness, 50)} ms, max ${Math.max(...lateness)} ms`,
    );
    expect(percentile(lags, 95)).toBeLessThanOrEqual(5_000);
    for (const late of lateness) expect(late).toBeGreaterThanOrEqual(-5);
    for (const late of lateness) expect(late).toBeLessThanOrEqual(5_000);
  });

  it('BullMQ scheduler occurrences run once across the switch: the planned one becomes the next in Hopper', async () => {
    const bull = await loadBull(6);
    const bp = newBullPrefix();
    const name = env.queueName('sched');
    const conn = new Redis(env.url, { maxRetriesPerRequest: null });
    const bq = new bull.Queue(name, { connection: conn, prefix: bp });
    await bq.upsertJobScheduler('every-sec', { pattern: '* * * * * *', tz: 'Europe/Paris' }, { name: 'tick', data: { s: 1 } });
    const instants: number[] = [];
    // BullMQ runs a few occurrences first.
    const bw = new bull.Worker(
      name,
      async (job: { opts: { prevMillis?: number } }) => {
        instants.push(job.opts.prevMillis!);
      },
      { connection: conn, prefix: bp },
    );
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (instants.length >= 2) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
    await bw.close();
    const report = await migrateFromBullMQ({ from: env.url, queue: name, prefix: bp, hopperPrefix: env.prefix });
    await bq.close();
    conn.disconnect();
    expect(report.schedulers).toBe(1);
    const bullCount = instants.length;
    await new Promise<void>((resolve) => {
      env.worker(name, async (job) => {
        instants.push(job.opts.prevMillis!);
        if (instants.length >= bullCount + 3) resolve();
      });
    });
    const queue = env.queue(name);
    expect(await queue.getJobScheduler('every-sec')).toMatchObject({ pattern: '* * * * * *', tz: 'Europe/Paris' });
    const sorted = [...instants].sort((a, b) => a - b);
    expect(new Set(sorted).size).toBe(sorted.length);
    // One per second, none skipped across the switch (the catch-up policy runs a missed one).
    for (let i = 1; i < sorted.length; i++) expect(sorted[i] - sorted[i - 1]).toBe(1000);
  });
});
